package mcpapps

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/maker"
	"github.com/snuggen/snuggen/pack"
)

// The host's model writes the app (issue 29 item 4): with Options.Make the
// server offers install_app, a model-visible tool on an MCP server of its
// own (Handler's /mcp; Run with no app given). A call builds the document
// with --strict; when it fails the diagnostics are the tool's result, with
// each one's line, why and fix, so the model fixes the file and calls
// again; when it builds, the app is kept for the calling user (MakeOptions
// Dir) and offered on that same server as a new ui:// resource with its
// open tool, which go-sdk announces to the client
// (notifications/resources/list_changed and tools/list_changed). A call
// with a name already installed replaces that app, the old version kept.
//
// Each user gets a server of their own for it (tools/list names only their
// apps). The apps installed this way share that server, and so one trust
// domain per user: a host forwards any view's tools/call, so one installed
// app's view can open another's and call install_app. An app that must be
// kept apart is served by a snuggen mcp of its own (its folder is an app
// folder: snuggen mcp DIR/<user>/<key>).

// InstallTool is the model-visible tool that installs an app.
const InstallTool = "install_app"

// MadePrefix begins the key of every app install_app installs, so that none
// takes a served app's key (and its storage).
const MadePrefix = "made-"

// MakeOptions turn install_app on (Options.Make).
type MakeOptions struct {
	// Dir keeps each user's installed apps, Dir/<user>/<key>/app.html
	// with earlier versions beside it (hostkit/maker's layout). Required.
	Dir string
	// MaxBytes bounds the document a call carries
	// (maker.DefaultMaxReplyBytes when zero).
	MaxBytes int
}

// makers holds the install_app server of each user, made on first use and
// forgotten once the user has held no MCP session for the time sessions
// keep one's entry (the apps are on disk: the next session's server offers
// them again), so the table holds the users of the last idle period, not
// every user the host ever served.
type makers struct {
	mu    sync.Mutex
	users map[string]*madeServer
	swept time.Time // the last sweep
}

// madeServer is one user's install_app server and when a request last
// asked for it.
type madeServer struct {
	srv  *mcp.Server
	last time.Time
}

// userOfHeader is the user the guard set on a request's header, "" for
// none (a server without an authenticator has one user, "").
func (s *Server) userOfHeader(h http.Header) string {
	nonce, user, found := strings.Cut(h.Get(userHeader), " ")
	if !found || subtle.ConstantTimeCompare([]byte(nonce), []byte(s.nonce)) != 1 {
		return ""
	}
	return user
}

// makeEndpoint is the install_app endpoint: each request goes to the
// server of the user the guard authenticated.
func (s *Server) makeEndpoint() http.Handler {
	return s.endpointOf(func(r *http.Request) *mcp.Server { return s.makerFor(s.userOfHeader(r.Header)) })
}

// makerFor returns user's install_app server, made with the apps the user
// installed before.
func (s *Server) makerFor(user string) *mcp.Server {
	s.makers.mu.Lock()
	defer s.makers.mu.Unlock()
	now := time.Now()
	s.sweepMakers(now)
	if m := s.makers.users[user]; m != nil {
		m.last = now
		return m.srv
	}
	m := mcp.NewServer(&mcp.Implementation{Name: s.opts.Name, Title: "Snug apps: install your own", Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions: "install_app installs a Snug app you write (one HTML file, built with snuggen build --strict). When it reports problems, fix each as its fix says and call it again with the whole file. Then call the app's open_* tool to show it.",
		Capabilities: &mcp.ServerCapabilities{
			Tools:      &mcp.ToolCapabilities{ListChanged: true},
			Resources:  &mcp.ResourceCapabilities{ListChanged: true},
			Extensions: map[string]any{Extension: map[string]any{"mimeTypes": []string{MIMEType}}},
		},
	})
	m.AddReceivingMiddleware(s.textOnly)
	m.AddTool(s.installToolSpec(), s.installTool(user, m))
	s.loadMade(m, user)
	s.makers.users[user] = &madeServer{srv: m, last: now}
	return m
}

// sweepMakers forgets, at most once a sweep interval, the install_app
// server of every user who holds no MCP session and asked for it longer
// ago than a session's entry is kept. s.makers.mu is held.
func (s *Server) sweepMakers(now time.Time) {
	t := s.sessions
	if now.Sub(s.makers.swept) < t.sweepEvery() {
		return
	}
	s.makers.swept = now
	for user, m := range s.makers.users {
		if now.Sub(m.last) > t.forgetAfter() && !t.holds(user) {
			delete(s.makers.users, user)
		}
	}
}

// userDir is the folder of user's installed apps.
func (s *Server) userDir(user string) string {
	name := "local"
	if user != "" {
		sum := sha256.Sum256([]byte(user))
		name = "u-" + hex.EncodeToString(sum[:16])
	}
	return filepath.Join(s.opts.Make.Dir, name)
}

// loadMade offers the apps user installed before on m.
func (s *Server) loadMade(m *mcp.Server, user string) {
	dir := s.userDir(user)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			s.logf("install_app: the installed apps of a user: %v", err)
		}
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), MadePrefix) || !hostkit.ValidKey(e.Name()) {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, e.Name(), maker.Page))
		if err != nil {
			continue
		}
		res, err := Build(context.Background(), pack.Options{Path: maker.Page, HTML: src})
		if err != nil {
			s.logf("install_app: %s of a user no longer builds: %v", e.Name(), err)
			continue
		}
		s.register(m, madeServed(e.Name(), res))
	}
}

func madeServed(key string, res *pack.Result) *served {
	mf := res.Manifest
	meta := hostkit.Meta{AppID: mf.AppID, DisplayName: mf.DisplayName, Description: mf.Description, IconEmoji: mf.IconEmoji, IconColor: mf.IconColor}
	if meta.DisplayName == "" {
		meta.DisplayName = key
	}
	return &served{key: key, doc: res.HTML, meta: meta, uri: "ui://snug/" + key + ".html", domains: resourceDomains(res.HTML)}
}

func (s *Server) installToolSpec() *mcp.Tool {
	return &mcp.Tool{
		Name:  InstallTool,
		Title: "Install a Snug app",
		Description: "Install a Snug app you wrote for the user: one whole HTML file following the Snug authoring guide " +
			"(snuggen prompt): storage through snug.db, the network through snug.net.fetch, no localStorage, no alert/confirm/prompt, " +
			"no inline on* handlers, no links to other local pages. It is built with snuggen build --strict. When the build reports " +
			"problems they are this tool's result, each with its line and fix: fix every one and call install_app again with the whole " +
			"corrected file. When it builds, the app is kept for the user and its open_* tool (named in the result) shows it. " +
			"Calling again with the same name replaces that app; its data stays.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name": map[string]any{"type": "string", "description": "the app's short name, such as \"habits\" (its key: made-habits)"},
				"html": map[string]any{"type": "string", "description": "the whole app as one HTML document"},
			},
			"required": []string{"name", "html"},
		},
		Meta: mcp.Meta{"ui": map[string]any{"visibility": []string{"model"}}},
	}
}

// installArgs are install_app's arguments.
type installArgs struct {
	Name string `json:"name"`
	HTML string `json:"html"`
}

// installTool is owner's install_app.
func (s *Server) installTool(owner string, m *mcp.Server) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		user, ok := s.userOf(req.Extra)
		if !ok || user != owner {
			return toolError(errNoUser.Error()), nil
		}
		var a installArgs
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return toolError("arguments: " + err.Error() + `: give {"name": "habits", "html": "<!doctype html>…"}`), nil
		}
		limit := s.opts.Make.MaxBytes
		if limit <= 0 {
			limit = maker.DefaultMaxReplyBytes
		}
		html, ok := maker.Extract(a.HTML)
		switch {
		case len(a.HTML) > limit:
			return toolError(fmt.Sprintf("html: %d bytes, over this server's bound of %d: make the app smaller", len(a.HTML), limit)), nil
		case !ok:
			return toolError("html: give the whole app as one HTML document (<!doctype html><html>…</html>), not a snippet or prose"), nil
		}
		res, err := Build(ctx, pack.Options{Path: maker.Page, HTML: []byte(html), Strict: true})
		if err != nil {
			return toolError(buildReport(res, err)), nil
		}
		key := madeKey(a.Name, res.Manifest.DisplayName)
		kept, err := maker.Install(filepath.Join(s.userDir(user), key), []byte(html))
		if err != nil {
			return nil, fmt.Errorf("install_app: %w", err)
		}
		sv := madeServed(key, res)
		s.register(m, sv)
		text := fmt.Sprintf("Installed %s as %s. Call %s to show it to the user.", sv.meta.DisplayName, key, s.OpenTool(key))
		if kept > 0 {
			text = fmt.Sprintf("Replaced %s (%s); the version it replaced is kept. Call %s to show it.", sv.meta.DisplayName, key, s.OpenTool(key))
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: text}},
			StructuredContent: map[string]any{"app": key, "openTool": s.OpenTool(key), "resourceUri": sv.uri, "replaced": kept > 0},
		}, nil
	}
}

// buildReport is a failed build as install_app's result: every error with
// its place, source line, why and fix, as snuggen build prints it.
func buildReport(res *pack.Result, err error) string {
	var diags []pack.Diagnostic
	if res != nil {
		for _, d := range res.Diagnostics {
			if d.Severity == pack.SeverityError {
				diags = append(diags, d)
			}
		}
	}
	if len(diags) == 0 {
		return "The app did not build: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The app does not build yet: snuggen build --strict reported %d problem(s). Nothing was installed.\n\n", len(diags))
	for _, d := range diags {
		b.WriteString(d.Detail())
		b.WriteByte('\n')
	}
	b.WriteString("Fix every problem as its fix says, keep the rest, and call install_app again with the whole corrected file.")
	return b.String()
}

// madeKey is the key of the app install_app installs as name (else its
// display name): MadePrefix and the name in a key's alphabet.
func madeKey(name, display string) string {
	if strings.TrimSpace(name) == "" {
		name = display
	}
	k := strings.TrimPrefix(hostkit.KeyFromPath(strings.TrimSpace(name)+".html"), MadePrefix)
	return (MadePrefix + k)[:min(64, len(MadePrefix)+len(k))]
}
