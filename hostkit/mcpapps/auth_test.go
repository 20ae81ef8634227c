package mcpapps_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/mcpapps"
	"github.com/snuggen/snuggen/hostkit/store"
)

// tokens is a test authorization server's word on its bearer tokens.
var tokens = map[string]string{"token-of-alice": "alice", "token-of-bob": "bob", "token-of-carol": "carol", "token-of-nobody": ""}

func verifyTokens(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	user, ok := tokens[tok]
	if !ok {
		return nil, fmt.Errorf("unknown token: %w", auth.ErrInvalidToken)
	}
	return &auth.TokenInfo{UserID: user, Expiration: time.Now().Add(time.Hour)}, nil
}

// bearer adds a token to every request of a client.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// connectAs is connect for the holder of token tok.
func (e *env) connectAs(t *testing.T, tok, pv string) *mcp.ClientSession {
	t.Helper()
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(mcpapps.Extension, map[string]any{"mimeTypes": []string{mcpapps.MIMEType}})
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: e.http.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer(tok)},
	}, &mcp.ClientSessionOptions{ProtocolVersion: pv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func withTokens(o *mcpapps.Options) {
	o.Tokens = verifyTokens
	o.AuthorizationServers = []string{"https://auth.example.com"}
}

// TestUsersOfOneServerStayApart: two users of one server over HTTP, each
// with a token of their own, share nothing: not the app's database, not its
// net grants (even one approved on a grant page with a forged Origin), and
// neither can use the other's handle.
func TestUsersOfOneServerStayApart(t *testing.T) {
	e := newEnv(t, withTokens)
	for _, pv := range protocols {
		t.Run("protocol "+pv, func(t *testing.T) {
			alice, bob := e.connectAs(t, "token-of-alice", pv), e.connectAs(t, "token-of-bob", pv)
			sa, sb := open(t, alice, "notes"), open(t, bob, "notes")
			key := "secret" + pv
			if f, res := call(t, alice, sa, map[string]any{"type": frame.TypeDBRequest, "op": "kvSet", "key": key, "value": "alice's"}); f == nil || f["ok"] != true {
				t.Fatalf("alice's kvSet: %v %s", f, toolText(res))
			}
			get := map[string]any{"type": frame.TypeDBRequest, "op": "kvGet", "key": key}
			if f, _ := call(t, bob, sb, get); f == nil || f["result"].(map[string]any)["found"] != false {
				t.Fatalf("bob read alice's key: %v", f)
			}
			if f, _ := call(t, bob, sb, map[string]any{"type": frame.TypeDBRequest, "op": "kvSet", "key": key, "value": "bob's"}); f == nil || f["ok"] != true {
				t.Fatalf("bob's kvSet: %v", f)
			}
			if f, _ := call(t, alice, sa, get); f == nil || f["result"].(map[string]any)["value"] != "alice's" {
				t.Fatalf("alice's key after bob wrote his: %v", f)
			}
			// Alice's handle, leaked to bob, does not work for bob.
			leaked := sa
			if f, res := call(t, bob, leaked, get); f != nil || !strings.Contains(toolText(res), "invalid or expired Snug handle") {
				t.Fatalf("bob with alice's handle: %v %s", f, toolText(res))
			}
		})
	}

	// Net grants: bob approves his own grant page, forging the page's
	// Origin as any client but a browser can; alice is still asked.
	alice, bob := e.connectAs(t, "token-of-alice", ""), e.connectAs(t, "token-of-bob", "")
	sa, sb := open(t, alice, "notes"), open(t, bob, "notes")
	fetch := map[string]any{"type": frame.TypeNetRequest, "url": e.origin + "/x", "method": "GET"}
	f, res := call(t, bob, sb, fetch)
	page, _ := res.Meta[mcpapps.MetaGrant].(string)
	if f == nil || page == "" {
		t.Fatalf("bob's first fetch: %v %v", f, res.Meta)
	}
	r, _ := http.NewRequest(http.MethodPost, page, strings.NewReader(url.Values{"decision": {"always"}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Origin", e.http.URL)
	resp, err := http.DefaultClient.Do(r)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("bob's grant: %v %v", err, resp)
	}
	resp.Body.Close()
	if f, _ := call(t, bob, sb, fetch); f["ok"] != true {
		t.Fatalf("bob after allowing: %v", f)
	}
	if f, _ := call(t, alice, sa, fetch); f == nil || f["ok"] != false || f["error"].(map[string]any)["code"] != frame.CodeNetNotApproved {
		t.Fatalf("alice reached what bob allowed: %v", f)
	}
	if g := e.gate.GrantsFor("alice", "notes"); len(g) != 0 {
		t.Fatalf("alice's grants: %v", g)
	}
	if g := e.gate.GrantsFor("bob", "notes"); len(g) != 1 {
		t.Fatalf("bob's grants: %v", g)
	}
}

// TestNoTokenNoService: without a valid token a request is 401 with
// WWW-Authenticate naming the endpoint's protected resource metadata, which
// the server serves; a token that names no user is refused too.
func TestNoTokenNoService(t *testing.T) {
	e := newEnv(t, withTokens)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(tok string) *http.Response {
		r, _ := http.NewRequest(http.MethodPost, e.http.URL+"/mcp", strings.NewReader(initialize))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	meta := e.http.URL + mcpapps.ProtectedResourcePath + "/mcp"
	for _, tok := range []string{"", "forged", "token-of-nobody"} {
		resp := post(tok)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="`+meta+`"`) {
			t.Errorf("token %q: %d, WWW-Authenticate %q", tok, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	if resp := post("token-of-alice"); resp.StatusCode != http.StatusOK {
		t.Errorf("alice's token: %d", resp.StatusCode)
	}
	resp, err := http.Get(meta)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if err != nil || m.Resource != e.http.URL+"/mcp" || len(m.AuthorizationServers) != 1 || m.AuthorizationServers[0] != "https://auth.example.com" {
		t.Errorf("metadata: %+v (%v)", m, err)
	}
}

// TestForeignOriginRefused: a request whose Origin is not one the server
// allows is 403, with a valid token or on a server without users, as the
// MCP streamable HTTP transport requires; an allowed origin passes.
func TestForeignOriginRefused(t *testing.T) {
	const allowed = "http://127.0.0.1:5173"
	for name, opt := range map[string]func(*mcpapps.Options){
		"tokens":  func(o *mcpapps.Options) { withTokens(o); o.AllowOrigins = []string{allowed} },
		"no auth": func(o *mcpapps.Options) { o.AllowOrigins = []string{allowed} },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, opt)
			for origin, want := range map[string]int{"http://evil.example": 403, "null": 403, e.http.URL: 403, allowed: 200} {
				r, _ := http.NewRequest(http.MethodPost, e.http.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Accept", "application/json, text/event-stream")
				r.Header.Set("Authorization", "Bearer token-of-alice")
				r.Header.Set("Origin", origin)
				resp, err := http.DefaultClient.Do(r)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("Origin %s: %d %s, want %d", origin, resp.StatusCode, body, want)
				}
			}
		})
	}
}

// TestNoAuthAnswersLoopbackOnly: a server without an authenticator refuses
// a connection that reached it on an address other than loopback (every
// caller would share one user's data), unless InsecureNoAuth says so.
func TestNoAuthAnswersLoopbackOnly(t *testing.T) {
	for _, insecure := range []bool{false, true} {
		e := newEnv(t, func(o *mcpapps.Options) { o.InsecureNoAuth = insecure })
		h := e.srv.Handler()
		for _, local := range []string{"127.0.0.1:8765", "[::1]:8765", "192.0.2.7:8765", "[2001:db8::1]:8765"} {
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{}`))
			a, _ := net.ResolveTCPAddr("tcp", local)
			r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, a))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			refused := w.Code == http.StatusForbidden && strings.Contains(w.Body.String(), "loopback connections only")
			if want := !insecure && !strings.HasPrefix(local, "127.") && !strings.HasPrefix(local, "[::1]"); refused != want {
				t.Errorf("insecure %v, local %s: %d %s", insecure, local, w.Code, w.Body)
			}
		}
	}
}

// usersSeen is a DBHandler in front of the store that notes the user of
// every call, as a replicated host's Cluster.DB() keys its databases.
type usersSeen struct {
	broker.DBHandler
	mu    sync.Mutex
	users []string
}

func (u *usersSeen) DBRequest(ctx context.Context, c broker.Call, r *frame.DBRequest) *frame.DBResponse {
	u.mu.Lock()
	u.users = append(u.users, c.User+"/"+c.App)
	u.mu.Unlock()
	return u.DBHandler.DBRequest(ctx, c, r)
}

// TestADBHandlerGetsTheUser: a host that answers db-requests itself
// (Options.DB, replicated mode's Cluster.DB()) gets each call's
// authenticated user and app, as the store does.
func TestADBHandlerGetsTheUser(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seen := &usersSeen{DBHandler: broker.Store(st)}
	e := newEnv(t, func(o *mcpapps.Options) { withTokens(o); o.Store = nil; o.DB = seen })
	for _, who := range []string{"alice", "bob"} {
		cs := e.connectAs(t, "token-of-"+who, "")
		if f, res := call(t, cs, open(t, cs, "notes"), map[string]any{"type": frame.TypeDBRequest, "op": "exec", "sql": "create table t (x)"}); f == nil || f["ok"] != true {
			t.Fatalf("%s: %v %s", who, f, toolText(res))
		}
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if strings.Join(seen.users, " ") != "alice/notes bob/notes" {
		t.Fatalf("the DB handler saw %q", seen.users)
	}
}
