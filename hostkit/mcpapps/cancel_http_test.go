package mcpapps_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHTTPCancelledCallResidual measures what docs/security.md records of
// issue 26.5 over --http: a call the client cancels with
// notifications/cancelled still gets an answer on its own POST stream (go-sdk
// writes one, and the stream ends only with it; over stdio Run drops it,
// TestStdioSettlesEveryCall). The answer is the cancellation, an error
// result, never the call's outcome, and it comes at once: the statement was
// stopped, not run to its end.
func TestHTTPCancelledCallResidual(t *testing.T) {
	e := newEnv(t, nil)
	key := e.srv.Keys()[0]
	cs := e.connectAt(t, "/mcp/"+key, true, "2025-11-25", nil)
	s := open(t, cs, key)
	post := func(body string) (*http.Response, error) {
		req, _ := http.NewRequest("POST", e.http.URL+"/mcp/"+key, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		return http.DefaultClient.Do(req)
	}
	frame := map[string]any{"v": 1, "type": "snug:db-request", "requestId": "slow1", "instanceId": s.InstanceID, "op": "exec",
		"sql": "with recursive c(x) as (select 1 union all select x+1 from c where x < 300000000) select count(*) from c"}
	args, _ := json.Marshal(map[string]any{"handle": s.Handle, "frame": frame})
	got := make(chan string, 1)
	go func() {
		res, err := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":555,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, s.Tools["snug:db-request"], args))
		if err != nil {
			got <- "err " + err.Error()
			return
		}
		b, _ := io.ReadAll(res.Body)
		got <- fmt.Sprintf("HTTP %d %s", res.StatusCode, b)
	}()
	// The cancel goes again every 100 ms until the stream ends: one sent
	// before the server read the call is ignored, as MCP says.
	cancelled := func() {
		res, err := post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":555}}`)
		if err != nil {
			t.Error(err)
			return
		}
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			t.Errorf("notifications/cancelled: HTTP %d", res.StatusCode)
		}
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case g := <-got:
			t.Logf("the cancelled call's stream: %q", g)
			if !strings.Contains(g, `"id":555`) || !strings.Contains(g, `"isError":true`) || !strings.Contains(g, "cancelled") {
				t.Errorf("the cancelled call's stream: %q, want the cancellation as an error result", g)
			}
			return
		case <-tick.C:
			cancelled()
		case <-timeout:
			t.Fatal("the cancelled call's stream did not end in 15 s")
		}
	}
}
