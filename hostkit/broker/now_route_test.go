package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/store"
)

// rawPort is a Port that hands each frame's bytes to a channel.
type rawPort chan []byte

func (p rawPort) Send(f frame.Frame, raw []byte) { p <- raw }

// countingNow is the store's nowDB counting the answers it gave at
// once.
type countingNow struct {
	nowDB
	answered int
}

func (c *countingNow) dbRequestNow(call Call, r *frame.DBRequest) *frame.DBResponse {
	resp := c.nowDB.dbRequestNow(call, r)
	if resp != nil {
		c.answered++
	}
	return resp
}

// TestKVGetNowAnswersAsDBRequest runs a corpus of kvGets through both
// routes a kvGet can take, the answer at once on the receiving goroutine
// (nowDB, the fast route) and a worker's DBRequest (the reference
// route), and holds the bytes sent to the page identical: values the
// encoder compacts or escapes, values at the cache's edges, keys not found
// and keys the store refuses.
func TestKVGetNowAnswersAsDBRequest(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	values := map[string]string{
		"plain":   `{"theme":"dark","size":14,"recent":["a","b","c"]}`,
		"spaced":  "{ \"a\" : [ 1 , 2 ] ,\n\t\"b\" : null }",
		"html":    `{"x":"<script>&amp;</script>"}`,
		"seps":    "\"\u2028\u2029\"",
		"escaped": `"\u00e9\ud83d\ude00\n\\"`,
		"unicode": `"é😀"`,
		"number":  `-1.5e300`,
		"deep":    strings.Repeat("[", 40) + strings.Repeat("]", 40),
		"big":     `"` + strings.Repeat("x", 5000) + `"`, // past the cache's value limit
		"edge":    `"` + strings.Repeat("y", 4094) + `"`, // at it
	}
	keys := []string{"", "missing", strings.Repeat("k", 3000)}
	for k, v := range values {
		if err := st.KVSet(ctx, "app", k, []byte(v)); err != nil {
			t.Fatalf("kvSet %s: %v", k, err)
		}
		keys = append(keys, k)
	}
	now := &countingNow{nowDB: Store(st).(nowDB)}
	answers := func(db DBHandler) []string {
		br := New(Options{DB: db})
		t.Cleanup(func() { br.Shutdown(context.Background()) })
		port := rawPort(make(chan []byte, 4))
		s, err := br.Open("app", port)
		if err != nil {
			t.Fatal(err)
		}
		s.Load()
		<-port // host-ready
		var out []string
		for round := range 2 { // the first read of a key fills the cache
			for i, k := range keys {
				key, _ := json.Marshal(k)
				raw := fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":"r%d-%d","instanceId":%q,"op":"kvGet","key":%s}`, round, i, s.InstanceID(), key)
				if v := s.Receive(ctx, []byte(raw)); v.Verdict != "accept" && k != "" && len(k) < 1000 {
					t.Fatalf("kvGet %q: %+v", k, v)
				}
				select {
				case got := <-port:
					out = append(out, string(got))
				case <-time.After(30 * time.Second):
					t.Fatalf("no answer to the kvGet of %q", k)
				}
			}
		}
		return out
	}
	fast := answers(now)
	ref := answers(DBFunc(now.DBRequest))
	if now.answered < len(values) {
		t.Fatalf("only %d of the corpus's kvGets took the route at once", now.answered)
	}
	for i := range ref {
		if fast[i] != ref[i] {
			t.Errorf("answer %d differs:\n at once: %.200s\n  worker: %.200s", i, fast[i], ref[i])
		}
	}
}
