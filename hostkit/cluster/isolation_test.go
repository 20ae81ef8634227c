package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/internal/relayclient"
)

// Two replicas (hosts sharing PostgreSQL and the object store) and two
// users of one app: through either replica a user reaches only their own
// database, grants and audit entries, and a request without a user, or a
// forwarded request without the cluster's secret, reaches nothing.
func TestUsersStayApartAcrossReplicas(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("weather")) }))
	defer up.Close()
	ap := netip.MustParseAddrPort(up.Listener.Addr().String())
	hosts := make([]*hostkit.Host, 2)
	clusters := make([]*Cluster, 2)
	for i := range hosts {
		c := openCluster(t, pg, s3.url("iso"), 2*time.Second)
		clusters[i] = c
		hosts[i] = notesHost(t, c, hostkit.WithNet(netgate.Config{DevHTTPHosts: []string{"127.0.0.1"}}, netgate.WithAllowedAddrs(ap)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// No user, no connection.
	if _, err := relayclient.Dial(ctx, hosts[0].Origin(), nil); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("a page without a user connected: %v", err)
	}

	type pageOf struct {
		c    *relayclient.Client
		inst string
		mu   sync.Mutex
		asks []relayclient.Confirm
	}
	open := func(host int, user, answer string) *pageOf {
		c, err := relayclient.Dial(ctx, hosts[host].Origin(), http.Header{"X-User": {user}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		p := &pageOf{c: c}
		c.OnConfirm("s1", func(q relayclient.Confirm) string {
			p.mu.Lock()
			p.asks = append(p.asks, q)
			p.mu.Unlock()
			return answer
		})
		if p.inst, err = c.Mount(ctx, "s1", "notes"); err != nil {
			t.Fatal(err)
		}
		return p
	}
	execOn := func(p *pageOf, sql string, params ...any) *frame.DBResponse {
		r, err := p.c.DB(ctx, "s1", p.inst, frame.DBRequest{Op: frame.OpExec, SQL: &sql, Params: params})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	aliceA, aliceB := open(0, "alice", "always"), open(1, "alice", "always")
	bobA, bobB := open(0, "bob", "deny"), open(1, "bob", "deny")

	for _, w := range []struct {
		p    *pageOf
		note string
	}{{aliceA, "alice's secret"}, {bobB, "bob's secret"}} {
		if r := execOn(w.p, "CREATE TABLE IF NOT EXISTS notes(text)"); !r.OK {
			t.Fatal(r.Error.Message)
		}
		if r := execOn(w.p, "INSERT INTO notes VALUES (?)", w.note); !r.OK {
			t.Fatal(r.Error.Message)
		}
	}
	for _, c := range []struct {
		p    *pageOf
		want string
	}{{aliceA, "alice's secret"}, {aliceB, "alice's secret"}, {bobA, "bob's secret"}, {bobB, "bob's secret"}} {
		r := execOn(c.p, "SELECT group_concat(text) FROM notes")
		if !r.OK || len(r.Result.Rows) != 1 || r.Result.Rows[0][0] != c.want {
			t.Errorf("a page sees %+v, want only %q", r.Result, c.want)
		}
	}

	// Grants: alice's "always" on replica A holds for alice on replica B,
	// and never for bob.
	get := func(p *pageOf) *frame.NetResponse {
		r, err := p.c.Net(ctx, "s1", p.inst, frame.NetRequest{Method: "GET", URL: up.URL + "/today"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := get(aliceA); !r.OK {
		t.Fatalf("alice's first request: %+v", r.Error)
	}
	if r := get(aliceB); !r.OK || len(aliceB.asks) != 0 {
		t.Fatalf("alice on the other replica: %+v, asked %d times", r.Error, len(aliceB.asks))
	}
	if r := get(bobB); r.OK || r.Error.Code != frame.CodeNetConfirmDenied || len(bobB.asks) != 1 {
		t.Fatalf("bob was let through by alice's grant: %+v, asked %d times", r.Error, len(bobB.asks))
	}

	// Audit: each page got its own user's entries only, and the shared
	// audit keeps them apart.
	for _, c := range []struct {
		p    *pageOf
		user string
	}{{aliceA, "alice"}, {aliceB, "alice"}, {bobA, "bob"}, {bobB, "bob"}} {
		for _, raw := range c.p.c.Audits() {
			var e netgate.Entry
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			if e.User != c.user {
				t.Errorf("%s's page got an audit entry of %q: %s", c.user, e.User, raw)
			}
		}
	}
	if n := len(bobA.c.Audits()); n != 0 {
		t.Errorf("bob's page on replica A got %d audit entries; bob made no request there", n)
	}
	for user, want := range map[string]int{"alice": 2, "bob": 1} {
		entries, err := clusters[0].AuditEntries(ctx, user, "notes", 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != want {
			t.Errorf("%s has %d audit entries in the shared audit, want %d", user, len(entries), want)
		}
		for _, e := range entries {
			if e.User != user {
				t.Errorf("%s's audit holds an entry of %q", user, e.User)
			}
		}
	}

	// The internal listener answers replicas only.
	body, _ := json.Marshal(forwarded{User: "alice", App: "notes", Frame: json.RawMessage(`{"v":1,"type":"snug:db-request","requestId":"x","instanceId":"y","op":"exec","sql":"SELECT * FROM notes"}`)})
	for _, auth := range []string{"", "Bearer guess", "Bearer " + strings.Repeat("0", 64)} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, clusters[0].InternalURL()+forwardPath, bytes.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("a forwarded request with Authorization %q got HTTP %d", auth, res.StatusCode)
		}
	}
}

// A grant for a connection's origin rings the doorbell (a connection-event
// hint, R7) of that user's instances of the app on every replica, not only
// on the one where the user answered, and never another user's.
func TestConnectionEventsReachTheUserOnEveryReplica(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	t.Setenv("SNUG_TEST_TOKEN", "tok-0123456789abcdef")
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("me")) }))
	defer up.Close()
	roots := x509.NewCertPool()
	roots.AddCert(up.Certificate())
	ap := netip.MustParseAddrPort(up.Listener.Addr().String())
	cfg := netgate.Config{Connections: []netgate.Connection{{
		Name: "test-api", Origin: up.URL, Header: "X-Token", SecretEnv: "SNUG_TEST_TOKEN",
	}}}
	hosts := make([]*hostkit.Host, 2)
	for i := range hosts {
		hosts[i] = notesHost(t, openCluster(t, pg, s3.url("events"), 2*time.Second),
			hostkit.WithNet(cfg, netgate.WithAllowedAddrs(ap), netgate.WithTLSConfig(&tls.Config{RootCAs: roots})))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type pageOf struct {
		c    *relayclient.Client
		inst string
	}
	open := func(host int, user string) *pageOf {
		c, err := relayclient.Dial(ctx, hosts[host].Origin(), http.Header{"X-User": {user}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.OnConfirm("s1", func(relayclient.Confirm) string { return "always" })
		inst, err := c.Mount(ctx, "s1", "notes")
		if err != nil {
			t.Fatal(err)
		}
		return &pageOf{c, inst}
	}
	grant := func(p *pageOf) {
		r, err := p.c.Net(ctx, "s1", p.inst, frame.NetRequest{Method: "GET", URL: up.URL + "/me"})
		if err != nil || !r.OK {
			t.Fatalf("the request that makes the grant: %v %+v", err, r)
		}
	}
	// waitEvents waits until p's app has heard n events and returns them.
	waitEvents := func(p *pageOf, n int, what string) []string {
		var got []string
		for deadline := time.Now().Add(20 * time.Second); ; {
			got = got[:0]
			for _, ev := range p.c.Events("s1") {
				got = append(got, ev.Event+" "+string(ev.Data))
			}
			if len(got) >= n || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond) // polling the page's record, not timing anything
		}
		if len(got) != n {
			t.Fatalf("%s: heard %q, want %d events", what, got, n)
		}
		return got
	}
	const connected = `connection-event {"connection":"test-api","state":"connected"}`
	aliceA, aliceB, bobB := open(0, "alice"), open(1, "alice"), open(1, "bob")
	bobA := open(0, "bob")

	grant(aliceA) // alice says "always" on replica A
	if got := waitEvents(aliceA, 1, "alice's page on A"); got[0] != connected {
		t.Errorf("alice's page on A heard %q", got)
	}
	if got := waitEvents(aliceB, 1, "alice's page on B"); got[0] != connected {
		t.Errorf("alice's page on B heard %q", got)
	}
	// Bob's own grant, made on A, reaches bob on B after alice's event
	// (one channel, in order): had alice's reached bob, he would hold two.
	grant(bobA)
	waitEvents(bobB, 1, "bob's page on B")
	waitEvents(bobA, 1, "bob's page on A")
	// A round trip on each page after the events: anything sent to it
	// before is in by then.
	sql := "SELECT 1"
	for _, c := range []struct {
		p    *pageOf
		name string
	}{{aliceA, "alice's page on A"}, {aliceB, "alice's page on B"}, {bobA, "bob's page on A"}, {bobB, "bob's page on B"}} {
		if r, err := c.p.c.DB(ctx, "s1", c.p.inst, frame.DBRequest{Op: frame.OpExec, SQL: &sql}); err != nil || !r.OK {
			t.Fatalf("%s: %v %+v", c.name, err, r)
		}
		if n := len(c.p.c.Events("s1")); n != 1 {
			t.Errorf("%s heard %d events, want its own user's one", c.name, n)
		}
	}
}
