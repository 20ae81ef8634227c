package mcpapps_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/mcpapps"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/hostkit/store"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

const noteApp = `<!doctype html><html><head><title>Notes</title>
<meta name="snug:app-id" content="com.example.notes"><meta name="snug:display-name" content="Notes">
<meta name="snug:description" content="Keeps notes."></head>
<body><script>snug.ready.then(() => snug.db.exec("select 1"))</script></body></html>`

const cdnApp = `<!doctype html><html><head><title>Chart</title>
<meta name="snug:app-id" content="com.example.chart"><meta name="snug:display-name" content="Chart">
<script src="https://cdn.jsdelivr.net/npm/chart.js@4.4.0/dist/chart.umd.min.js"></script></head>
<body><canvas></canvas></body></html>`

// env is a server with every capability on real parts (a SQLite store in a
// temp dir, the offline agent behind the real bridge, the real net gate),
// served over streamable HTTP on loopback.
type env struct {
	srv    *mcpapps.Server
	http   *httptest.Server
	gate   *netgate.Gate
	origin string // a loopback HTTP origin the gate may reach once granted
}

func newEnv(t *testing.T, opt func(*mcpapps.Options)) *env {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true,"path":"`+r.URL.Path+`"}`)
	}))
	t.Cleanup(upstream.Close)
	ap := netip.MustParseAddrPort(strings.TrimPrefix(upstream.URL, "http://"))
	gate, err := netgate.New(netgate.Config{DevHTTPHosts: []string{"127.0.0.1"}}, netgate.WithAllowedAddrs(ap))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gate.Close() })
	e := &env{gate: gate, origin: upstream.URL}
	e.http = httptest.NewUnstartedServer(nil)
	e.http.Start()
	t.Cleanup(e.http.Close)
	opts := mcpapps.Options{
		Apps: []mcpapps.App{mcpapps.RawApp("notes", []byte(noteApp)), mcpapps.RawApp("chart", []byte(cdnApp))},
		// One server for both, so that the tests can try one app's handle
		// on the other's tools (TestEachAppIsAServerOfItsOwn has the default).
		SharedServer: true,
		Agent:        agent.NewBridge(offline.New(offline.Options{}), agent.Options{}),
		Store:        st,
		Net:          gate,
		GrantBase:    e.http.URL,
		Logf:         t.Logf,
	}
	if opt != nil {
		opt(&opts)
	}
	e.srv, err = mcpapps.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.srv.Close(context.Background()) })
	e.http.Config.Handler = e.srv.Handler()
	return e
}

// connect opens a go-sdk client session: one that renders MCP Apps (ui)
// or not, at protocol version pv ("" for the newest, stateless).
func (e *env) connect(t *testing.T, ui bool, pv string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return e.connectAt(t, "/mcp", ui, pv, copts)
}

// connectAt is connect to the endpoint at path.
func (e *env) connectAt(t *testing.T, path string, ui bool, pv string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	if copts == nil {
		copts = &mcp.ClientOptions{}
	}
	copts.Capabilities = &mcp.ClientCapabilities{}
	if ui {
		copts.Capabilities.AddExtension(mcpapps.Extension, map[string]any{"mimeTypes": []string{mcpapps.MIMEType}})
	}
	if copts.ElicitationHandler != nil {
		copts.Capabilities.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, copts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.http.URL + path}, &mcp.ClientSessionOptions{ProtocolVersion: pv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// protocols are the two eras a server must answer: the stateless
// 2026-07-28 and the session-based one hosts' TypeScript client speaks.
var protocols = []string{"", "2025-11-25"}

type session struct {
	Handle       string             `json:"handle"`
	InstanceID   string             `json:"instanceId"`
	Capabilities frame.Capabilities `json:"capabilities"`
	Tools        map[string]string  `json:"tools"`
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
}

func open(t *testing.T, cs *mcp.ClientSession, key string) session {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "open_" + key})
	if err != nil || res.IsError {
		t.Fatalf("open_%s: %v %+v", key, err, res)
	}
	var s session
	remarshal(t, res.Meta[mcpapps.MetaSession], &s)
	if s.Handle == "" || s.InstanceID == "" {
		t.Fatalf("open_%s: no session in the result's _meta: %+v", key, res.Meta)
	}
	return s
}

var lastID int

// call sends one request frame through the app-only tool of its type and
// returns the terminal frame, fetching parts when the answer came in parts.
func call(t *testing.T, cs *mcp.ClientSession, s session, fields map[string]any) (map[string]any, *mcp.CallToolResult) {
	t.Helper()
	lastID++
	f := map[string]any{"v": 1, "requestId": "r" + string(rune('a'+lastID%26)) + time.Now().Format("150405.000000000"), "instanceId": s.InstanceID}
	for k, v := range fields {
		f[k] = v
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: s.Tools[f["type"].(string)], Arguments: map[string]any{"handle": s.Handle, "frame": f}})
	if err != nil {
		t.Fatalf("%s: %v", f["type"], err)
	}
	if res.IsError {
		return nil, res
	}
	var out map[string]any
	remarshal(t, res.StructuredContent, &out)
	if next, _ := out["next"].(string); next != "" {
		text := out["part"].(string)
		for next != "" {
			pr, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: s.Tools["part"], Arguments: map[string]any{"handle": s.Handle, "transfer": next}})
			if err != nil || pr.IsError {
				t.Fatalf("part: %v %+v", err, pr)
			}
			var p map[string]any
			remarshal(t, pr.StructuredContent, &p)
			text += p["part"].(string)
			next, _ = p["next"].(string)
		}
		out = nil
		if err := json.Unmarshal([]byte(text), &out); err != nil {
			t.Fatalf("parts joined: %v", err)
		}
	}
	return out, res
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestResourcesAndToolsForAnAppsHost(t *testing.T) {
	e := newEnv(t, nil)
	for _, pv := range protocols {
		t.Run("protocol "+pv, func(t *testing.T) {
			cs := e.connect(t, true, pv, nil)
			ctx := context.Background()
			rl, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rl.Resources) != 2 {
				t.Fatalf("resources: %d, want one per app (2)", len(rl.Resources))
			}
			for _, r := range rl.Resources {
				if r.MIMEType != mcpapps.MIMEType || !strings.HasPrefix(r.URI, "ui://snug/") {
					t.Errorf("resource %s: MIME %q", r.URI, r.MIMEType)
				}
				rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
				if err != nil {
					t.Fatal(err)
				}
				c := rr.Contents[0]
				if c.MIMEType != mcpapps.MIMEType || c.URI != r.URI {
					t.Errorf("read %s: %q %q", r.URI, c.MIMEType, c.URI)
				}
				html := []byte(c.Text)
				if runtimejs.TargetOf(html) != "mcp" {
					t.Errorf("%s is not built with the MCP runtime", r.URI)
				}
				checkDefences(t, r.URI, html)
				// The handle rides in the tool result, never in the HTML
				// (hosts cache it): the document is the same after an open.
				key := strings.TrimSuffix(strings.TrimPrefix(r.URI, "ui://snug/"), ".html")
				sess := open(t, cs, key)
				again, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
				if err != nil || again.Contents[0].Text != c.Text || strings.Contains(c.Text, sess.Handle) {
					t.Errorf("%s: the HTML changed with an open, or holds the handle", r.URI)
				}
				for _, m := range []mcp.Meta{r.Meta, c.Meta} {
					var ui struct {
						CSP struct {
							Connect  *[]string `json:"connectDomains"`
							Resource []string  `json:"resourceDomains"`
						} `json:"csp"`
					}
					remarshal(t, m["ui"], &ui)
					if ui.CSP.Connect == nil || len(*ui.CSP.Connect) != 0 {
						t.Errorf("%s: connectDomains %v, want [] (the frame keeps no network)", r.URI, ui.CSP.Connect)
					}
					want := []string{}
					if strings.Contains(r.URI, "chart") {
						want = []string{"https://cdn.jsdelivr.net"}
					}
					if !slices.Equal(ui.CSP.Resource, want) {
						t.Errorf("%s: resourceDomains %v, want %v", r.URI, ui.CSP.Resource, want)
					}
				}
			}
			tl, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]*mcp.Tool{}
			for _, tool := range tl.Tools {
				byName[tool.Name] = tool
			}
			for _, key := range []string{"notes", "chart"} {
				open := byName["open_"+key]
				if open == nil {
					t.Fatalf("no open_%s tool", key)
				}
				var ui struct {
					URI        string   `json:"resourceUri"`
					Visibility []string `json:"visibility"`
				}
				remarshal(t, open.Meta["ui"], &ui)
				uri := "ui://snug/" + key + ".html"
				if ui.URI != uri || open.Meta["openai/outputTemplate"] != uri || !slices.Contains(ui.Visibility, "model") {
					t.Errorf("open_%s meta: %+v", key, open.Meta)
				}
				if key == "notes" && (open.Title != "Open Notes" || !strings.Contains(open.Description, "Keeps notes.")) {
					t.Errorf("open_notes: title %q description %q", open.Title, open.Description)
				}
				for _, suffix := range []string{"ask", "db", "net", "open_url", "part"} {
					tool := byName[key+"__"+suffix]
					if tool == nil {
						t.Fatalf("no %s__%s tool", key, suffix)
					}
					remarshal(t, tool.Meta["ui"], &ui)
					if !slices.Equal(ui.Visibility, []string{"app"}) || ui.URI != uri {
						t.Errorf("%s: meta %+v, want app-only on %s", tool.Name, tool.Meta, uri)
					}
				}
			}
		})
	}
}

func TestTextOnlyToolsForAHostWithoutApps(t *testing.T) {
	e := newEnv(t, nil)
	for _, pv := range protocols {
		t.Run("protocol "+pv, func(t *testing.T) {
			cs := e.connect(t, false, pv, nil)
			tl, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tl.Tools {
				names = append(names, tool.Name)
				if tool.Meta["ui"] != nil || tool.Meta["openai/outputTemplate"] != nil {
					t.Errorf("%s carries UI metadata for a text-only client: %v", tool.Name, tool.Meta)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"open_chart", "open_notes"}) {
				t.Fatalf("tools %v, want the open tools alone", names)
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "open_notes"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Meta[mcpapps.MetaSession] != nil || !strings.Contains(toolText(res), "Keeps notes.") {
				t.Fatalf("text-only open: %+v", res)
			}
		})
	}
}

// TestEveryAppOnlyTool drives storage, the agent, the net gate and the
// open-url check through the tools, as the MCP runtime does.
func TestEveryAppOnlyTool(t *testing.T) {
	e := newEnv(t, nil)
	if err := e.gate.Grant("notes", e.origin); err != nil {
		t.Fatal(err)
	}
	for _, pv := range protocols {
		t.Run("protocol "+pv, func(t *testing.T) {
			cs := e.connect(t, true, pv, nil)
			s := open(t, cs, "notes")
			if !s.Capabilities.DB || s.Capabilities.Streaming || s.Capabilities.Net == nil || !*s.Capabilities.Net {
				t.Errorf("capabilities %+v", s.Capabilities)
			}
			ok := func(f map[string]any, res *mcp.CallToolResult) map[string]any {
				t.Helper()
				if f == nil || f["ok"] != true {
					t.Fatalf("answer %v %+v", f, res)
				}
				return f
			}
			ok(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "exec", "sql": "create table if not exists t(x)"}))
			ok(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "exec", "sql": "insert into t values (?)", "params": []any{"milk"}}))
			got := ok(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "exec", "sql": "select x from t"}))
			rows := got["result"].(map[string]any)["rows"].([]any)
			if len(rows) == 0 || rows[0].([]any)[0] != "milk" {
				t.Fatalf("select: %v", got)
			}
			ok(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "kvSet", "key": "k", "value": map[string]any{"n": 1}}))
			got = ok(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "kvGet", "key": "k"}))
			if r := got["result"].(map[string]any); r["found"] != true || r["value"].(map[string]any)["n"] != 1.0 {
				t.Fatalf("kvGet: %v", got)
			}
			exp := ok(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "export"}))
			data := exp["result"].(map[string]any)["data"].(string)
			ok(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "import", "data": data}))

			schema := map[string]any{"type": "object", "properties": map[string]any{"title": map[string]any{"type": "string", "minLength": 3}}, "required": []any{"title"}, "additionalProperties": false}
			got = ok(call(t, cs, s, map[string]any{"type": frame.TypeAppMessage, "appId": "com.example.notes", "action": "suggest", "payload": map[string]any{"n": 1}, "responseSchema": schema}))
			title, _ := got["data"].(map[string]any)["title"].(string)
			if len(title) < 3 {
				t.Fatalf("ask with a schema: %v", got)
			}

			got = ok(call(t, cs, s, map[string]any{"type": frame.TypeNetRequest, "url": e.origin + "/hello", "method": "GET"}))
			if got["status"] != 200.0 || !strings.Contains(got["body"].(string), `"/hello"`) {
				t.Fatalf("net: %v", got)
			}

			got, _ = call(t, cs, s, map[string]any{"type": frame.TypeOpenURLRequest, "url": "https://example.com/a"})
			if got["status"] != frame.StatusOpened {
				t.Fatalf("open-url of a good URL: %v", got)
			}
			got, _ = call(t, cs, s, map[string]any{"type": frame.TypeOpenURLRequest, "url": "https://user@example.com/"})
			if got["status"] != frame.StatusRefused {
				t.Fatalf("open-url with userinfo: %v, want refused", got)
			}
		})
	}
}

// A database of 5 MiB goes both ways through one tool call each: the
// import's request body is the db size class, past go-sdk's default limit.
func TestAFiveMiBDatabaseRoundTrips(t *testing.T) {
	e := newEnv(t, nil)
	cs := e.connect(t, true, protocols[0], nil)
	s := open(t, cs, "notes")
	must := func(f map[string]any, res *mcp.CallToolResult) map[string]any {
		t.Helper()
		if f == nil || f["ok"] != true {
			t.Fatalf("answer %v %+v", f, res)
		}
		return f
	}
	must(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "exec", "sql": "create table big(b)"}))
	must(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "exec", "sql": "insert into big values (randomblob(?))", "params": []any{frame.MaxArtifactBytes - 256<<10}}))
	exp := must(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "export"}))
	data := exp["result"].(map[string]any)["data"].(string)
	if len(data) <= 4<<20 {
		t.Fatalf("the export is %d bytes of base64: too small to test the limit", len(data))
	}
	must(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "exec", "sql": "drop table big"}))
	must(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "import", "data": data}))
	got := must(call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "exec", "sql": "select length(b) from big"}))
	if rows := got["result"].(map[string]any)["rows"].([]any); rows[0].([]any)[0] != float64(frame.MaxArtifactBytes-256<<10) {
		t.Fatalf("after the import: %v", got)
	}
}

// TestHandlesBindOneApp: a forged, tampered, foreign or expired handle gets
// nothing, and a good handle reaches its own app's namespace only.
func TestHandlesBindOneApp(t *testing.T) {
	now := time.Now()
	clock := func() time.Time { return now }
	e := newEnv(t, func(o *mcpapps.Options) { o.Now = clock; o.Secret = bytes.Repeat([]byte{7}, 32) })
	cs := e.connect(t, true, "", nil)
	notes, chart := open(t, cs, "notes"), open(t, cs, "chart")
	if _, res := call(t, cs, notes, map[string]any{"type": frame.TypeDBRequest, "op": "kvSet", "key": "secret", "value": "notes only"}); res.IsError {
		t.Fatal(toolText(res))
	}
	refused := func(name string, s session, fields map[string]any) {
		t.Helper()
		f, res := call(t, cs, s, fields)
		if f != nil || !res.IsError || !strings.Contains(toolText(res), "invalid or expired Snug handle") {
			t.Errorf("%s: got %v %q, want the handle refused", name, f, toolText(res))
		}
	}
	get := map[string]any{"type": frame.TypeDBRequest, "op": "kvGet", "key": "secret"}

	// notes' handle on chart's tool: the handle is notes', the tool chart's.
	replay := chart
	replay.Handle = notes.Handle
	refused("notes' handle on chart's tool", replay, get)

	// chart's own handle reads chart's namespace, whatever the frame claims.
	f, _ := call(t, cs, chart, map[string]any{"type": frame.TypeAppMessage, "appId": "com.example.notes", "action": "x"})
	if f == nil {
		t.Fatal("chart's ask failed")
	}
	f, _ = call(t, cs, chart, get)
	if f["result"].(map[string]any)["found"] != false {
		t.Fatalf("chart read notes' key: %v", f)
	}

	// A payload edited to name another app, with the old signature.
	body, sig, _ := strings.Cut(notes.Handle, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(body)
	edited := strings.Replace(string(raw), `"a":"notes"`, `"a":"chart"`, 1)
	forged := chart
	forged.Handle = base64.RawURLEncoding.EncodeToString([]byte(edited)) + "." + sig
	refused("payload edited to chart", forged, get)

	// A handle signed with another secret.
	other := newEnv(t, func(o *mcpapps.Options) { o.Secret = bytes.Repeat([]byte{8}, 32) })
	foreign := open(t, other.connect(t, true, "", nil), "notes")
	foreign.Tools = notes.Tools
	refused("handle of another server", foreign, get)

	for _, h := range []string{"", "x", ".", notes.Handle + "x", strings.Repeat("a", 600)} {
		bad := notes
		bad.Handle = h
		refused("garbage handle "+h, bad, get)
	}

	// The frame's type must be the tool's.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: notes.Tools[frame.TypeDBRequest], Arguments: map[string]any{
		"handle": notes.Handle, "frame": map[string]any{"v": 1, "type": frame.TypeNetRequest, "requestId": "x1", "instanceId": notes.InstanceID, "url": "https://example.com/", "method": "GET"}}})
	if err != nil || !res.IsError {
		t.Errorf("a net frame on the db tool: %v %+v", err, res)
	}

	// Expired.
	now = now.Add(mcpapps.DefaultHandleMaxAge + time.Hour)
	refused("expired handle", notes, get)
}

// TestResultsWithinTheCap: an export larger than the cap comes in parts,
// each result within MaxResultBytes, and joins to the whole.
func TestResultsWithinTheCap(t *testing.T) {
	const cap = 8 << 10
	e := newEnv(t, func(o *mcpapps.Options) { o.MaxResultBytes = cap })
	cs := e.connect(t, true, "", nil)
	s := open(t, cs, "notes")
	big := strings.Repeat("é<\"", 20000)
	if f, res := call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "kvSet", "key": "big", "value": big}); f == nil {
		t.Fatal(toolText(res))
	}
	f, res := call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "kvGet", "key": "big"})
	if f == nil || f["result"].(map[string]any)["value"] != big {
		t.Fatalf("the big value did not come back whole")
	}
	sc, _ := json.Marshal(res.StructuredContent)
	if len(sc) > cap {
		t.Fatalf("first result %d bytes, cap %d", len(sc), cap)
	}
	// Every part within the cap: fetch them again by hand.
	f2, res := call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "export"})
	if f2 == nil {
		t.Fatal(toolText(res))
	}
	var first map[string]any
	remarshal(t, res.StructuredContent, &first)
	if first["next"] == nil {
		t.Fatal("an export past the cap came in one result")
	}
	// The parts were consumed by call; a second fetch of a used transfer fails.
	pr, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: s.Tools["part"], Arguments: map[string]any{"handle": s.Handle, "transfer": first["next"]}})
	if err != nil || !pr.IsError {
		t.Fatalf("a used transfer answered again: %v %+v", err, pr)
	}
}

// TestNetConfirmAsAGrantPage: without elicitation, a new origin is
// NET_NOT_APPROVED with a grant page; allowing it there lets the retry pass.
func TestNetConfirmAsAGrantPage(t *testing.T) {
	e := newEnv(t, nil)
	cs := e.connect(t, true, "", nil)
	s := open(t, cs, "notes")
	req := map[string]any{"type": frame.TypeNetRequest, "url": e.origin + "/x", "method": "GET"}
	f, res := call(t, cs, s, req)
	if f == nil || f["ok"] != false || f["error"].(map[string]any)["code"] != frame.CodeNetNotApproved {
		t.Fatalf("first fetch: %v", f)
	}
	page, _ := res.Meta[mcpapps.MetaGrant].(string)
	if !strings.HasPrefix(page, e.http.URL+"/snug/grant/") || !strings.Contains(f["error"].(map[string]any)["message"].(string), page) {
		t.Fatalf("no grant page: %v %v", res.Meta, f)
	}
	resp, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), e.origin) || !strings.Contains(string(body), "Notes") {
		t.Fatalf("grant page: %s", body)
	}
	post := func(origin string) int {
		r, _ := http.NewRequest(http.MethodPost, page, strings.NewReader(url.Values{"decision": {"always"}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(""); code != http.StatusForbidden {
		t.Fatalf("a post without Origin: %d", code)
	}
	if code := post("https://evil.example"); code != http.StatusForbidden {
		t.Fatalf("a cross-site post: %d", code)
	}
	if code := post(e.http.URL); code != http.StatusOK {
		t.Fatalf("the page's own post: %d", code)
	}
	if code := post(e.http.URL); code != http.StatusNotFound {
		t.Fatalf("a grant link answered twice: %d", code)
	}
	if f, _ := call(t, cs, s, req); f["ok"] != true {
		t.Fatalf("after allowing: %v", f)
	}
}

func TestNetConfirmByElicitation(t *testing.T) {
	e := newEnv(t, nil)
	var asked []string
	cs := e.connect(t, true, "2025-11-25", &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, r.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}}, nil
	}})
	s := open(t, cs, "notes")
	f, _ := call(t, cs, s, map[string]any{"type": frame.TypeNetRequest, "url": e.origin + "/y", "method": "GET"})
	if f == nil || f["ok"] != true || len(asked) != 1 || !strings.Contains(asked[0], e.origin) {
		t.Fatalf("elicited fetch: %v, asked %q", f, asked)
	}
}

// TestEachAppIsAServerOfItsOwn: by default every app is an MCP server of
// its own, at /mcp/<key>: its client lists and reaches that app alone, so a
// host that forwards any view's calls to the view's server gives no view
// another app's open tool, resource or app-only tools. /mcp names the
// endpoints, and one transport (stdio) refuses several servers.
func TestEachAppIsAServerOfItsOwn(t *testing.T) {
	e := newEnv(t, func(o *mcpapps.Options) { o.SharedServer = false })
	for _, key := range []string{"notes", "chart"} {
		other := map[string]string{"notes": "chart", "chart": "notes"}[key]
		if got := e.srv.Endpoint(key); got != "/mcp/"+key {
			t.Fatalf("Endpoint(%s) = %s", key, got)
		}
		cs := e.connectAt(t, e.srv.Endpoint(key), true, "", nil)
		tl, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range tl.Tools {
			if !strings.Contains(tool.Name, key) {
				t.Errorf("%s's server lists %s", key, tool.Name)
			}
		}
		rl, err := cs.ListResources(context.Background(), nil)
		if err != nil || len(rl.Resources) != 1 || rl.Resources[0].URI != e.srv.ResourceURI(key) {
			t.Errorf("%s's server lists resources %+v (%v)", key, rl, err)
		}
		if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: e.srv.ResourceURI(other)}); err == nil {
			t.Errorf("%s's server reads %s's resource", key, other)
		}
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "open_" + other}); err == nil && !res.IsError {
			t.Errorf("%s's server opens %s: %+v", key, other, res)
		}
		s := open(t, cs, key)
		if f, res := call(t, cs, s, map[string]any{"type": frame.TypeDBRequest, "op": "kvGet", "key": "k"}); f == nil {
			t.Errorf("%s's own db: %s", key, toolText(res))
		}
	}
	resp, err := http.Post(e.http.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "/mcp/<key>") {
		t.Errorf("/mcp: %d %s", resp.StatusCode, body)
	}
	if err := e.srv.Run(context.Background(), &mcp.InMemoryTransport{}); err != mcpapps.ErrSeveralServers {
		t.Errorf("Run with two servers: %v", err)
	}
}
