// Package mcpapps serves Snug apps to MCP Apps hosts (Claude, ChatGPT, VS
// Code, Goose and every other host of the io.modelcontextprotocol/ui
// extension) as an MCP server, with their agent, storage, governed network
// and open-url working through hostkit's own broker and capabilities.
//
// Each app is an MCP server of its own (Handler's /mcp/<key>) unless
// Options.SharedServer puts them all on one: a host forwards a view's calls
// to the view's server, so apps on one server are one trust domain.
//
// Per installed app it offers one UI resource, ui://snug/<key>.html (MIME
// type text/html;profile=mcp-app: the app built with the MCP flavour of the
// runtime and the host's sandbox defences inside the document
// (server.PrepareStandalone), _meta.ui.csp.connectDomains empty so the
// frame keeps no network),
// one model-visible tool that opens it (open_<key>, _meta.ui.resourceUri and
// openai/outputTemplate), and app-only tools (_meta.ui.visibility ["app"]):
// <key>__ask, <key>__db, <key>__net, <key>__open_url carry one Snug request
// frame each to the broker, which answers it exactly as for a Snug host (the
// agent bridge with its envelope, C1 strip, reply ladder, responseSchema and
// PARSE_FAILED budget; the SQLite store; the net gate; the open-url check),
// and <key>__part returns the rest of an answer too large for one result.
//
// Every app-only call presents the handle the open tool minted (see
// handle.go). The server trusts nothing else: the host's bridge forwards a
// view's tools/call without checking visibility, any view may call any tool
// of the server, and a view may be hostile.
//
// Its limits: what MCP Apps cannot carry degrades as docs/mcp-apps.md says
// (no streaming, no push hints, the net confirm dialog as an elicitation or
// a grant page).
package mcpapps

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/hostkit/openurl"
	"github.com/snuggen/snuggen/hostkit/server"
	"github.com/snuggen/snuggen/hostkit/store"
)

// The MCP Apps names this server writes (the extension has no Go SDK).
const (
	// Extension is the MCP Apps extension id.
	Extension = "io.modelcontextprotocol/ui"
	// MIMEType is the MIME type of an MCP Apps HTML resource.
	MIMEType = "text/html;profile=mcp-app"
	// MetaSession is the open tool result's _meta key the MCP runtime reads.
	MetaSession = "snug/session"
	// MetaGrant is the _meta key of a net answer's grant page URL.
	MetaGrant = "snug/grant"
)

// Defaults.
const (
	// DefaultMaxResultBytes bounds one tool result's structuredContent; a
	// larger answer is sent in parts (hosts cap tool results).
	DefaultMaxResultBytes = 256 << 10
	// DefaultHandleMaxAge is how long a handle stays good: a conversation
	// reopened within it finds its app working.
	DefaultHandleMaxAge = 30 * 24 * time.Hour
	// DefaultIdle is how long an instance keeps its broker session unused.
	DefaultIdle = 30 * time.Minute
	// DefaultMaxInstances is how many app instances (views, each with its
	// broker session) one user keeps at once.
	DefaultMaxInstances = 256
)

// UIMode says when tools carry their MCP Apps metadata.
type UIMode string

// The UI modes.
const (
	// UIAuto: only for a client that lists MIMEType under the extension.
	UIAuto UIMode = "auto"
	// UIAlways: for every client (a host that renders apps without saying so).
	UIAlways UIMode = "always"
	// UINever: text-only tools for every client.
	UINever UIMode = "never"
)

// Options configure a Server.
type Options struct {
	// Apps are the apps served; at least one.
	Apps []App
	// SharedServer serves every app on one MCP server (Handler's /mcp, and
	// Run with several apps). The apps are then one trust domain: a host
	// forwards any view's tools/call and resources/read to the view's
	// server, so each app's view can call every other app's open tool and
	// use the handle it returns on that app's storage, grants and agent
	// budget. By default each app is an MCP server of its own (Handler's
	// /mcp/<key>; Run takes one app), and a host keeps one server's views
	// away from another's tools.
	SharedServer bool
	// Agent answers the apps' asks; nil offers no ask tool.
	Agent *agent.Bridge
	// Store keeps the apps' databases; nil offers no db.
	Store *store.Store
	// DB answers db-requests in place of Store: a host in replicated mode
	// passes its hostkit.Cluster's DB() (the gate and the agent bridge take
	// the Cluster's grant store and budget when they are made). It gets
	// each call's user and app in broker.Call, as Store does.
	DB broker.DBHandler
	// Net is the governed network; nil offers no net. The server is the
	// gate's confirmer for its apps: an elicitation where the client takes
	// one, else the grant page at GrantBase.
	Net *netgate.Gate
	// Secret signs the handles (32 bytes or more); nil picks a random one,
	// so that handles end with the process.
	Secret []byte
	// HandleMaxAge bounds a handle's age (DefaultHandleMaxAge when zero).
	HandleMaxAge time.Duration
	// MaxResultBytes bounds one tool result's structured content
	// (DefaultMaxResultBytes when zero; at least 4096).
	MaxResultBytes int
	// GrantBase is the absolute URL under which Handler serves its grant
	// pages (http://127.0.0.1:8765, say); empty when there is none (stdio).
	GrantBase string
	// AllowOrigins are browser origins (scheme://host:port) that may call
	// Handler from a page: an MCP Apps host that runs in a browser. A
	// request with any other Origin is refused 403 (auth.go).
	AllowOrigins []string
	// Tokens makes the server an OAuth 2.1 protected resource, as MCP's
	// authorization has it: every request to an MCP endpoint must carry a
	// bearer token that Tokens accepts (auth.ErrInvalidToken otherwise),
	// whose TokenInfo.UserID names the user and whose Expiration has not
	// passed. A request without one is answered 401 with WWW-Authenticate
	// naming the endpoint's protected resource metadata, which Handler
	// serves under ProtectedResourcePath (with AuthorizationServers and
	// TokenScopes; GrantBase is the server's public URL). Every database,
	// grant, agent budget and audit entry is then keyed by (user, app), and
	// a handle works for the user it was minted for only.
	Tokens auth.TokenVerifier
	// TokenScopes are the scopes every token must carry (none when empty).
	TokenScopes []string
	// AuthorizationServers are the issuers of the tokens, as the protected
	// resource metadata lists them.
	AuthorizationServers []string
	// Authenticate is the verifier hook of a server whose users are known
	// some other way (a proxy's header, the embedding product's session):
	// it names the user of each request to an MCP endpoint, and an error or
	// an empty user refuses it (401). It keys everything by (user, app) as
	// Tokens does; set one of the two.
	Authenticate func(r *http.Request) (user string, err error)
	// InsecureNoAuth lets a server without Tokens or Authenticate answer
	// connections that reach it on an address other than loopback; they
	// are refused (403) otherwise, because every caller would share one
	// user's data, grants and budget.
	InsecureNoAuth bool
	// Make, when set, offers install_app (make.go): the host's model
	// writes an app and the server keeps it for the user, on an MCP server
	// of its own (Handler's /mcp; Run when Apps is empty). Apps are then
	// always at /mcp/<key>; SharedServer cannot be set with it.
	Make *MakeOptions
	// UI says when tools carry their MCP Apps metadata (UIAuto when empty).
	UI UIMode
	// Name and Version are the server's identity (snuggen and its version).
	Name, Version string
	// Idle is how long an unused instance keeps its session (DefaultIdle).
	Idle time.Duration
	// MaxInstances is how many instances one user (without an
	// authenticator, every caller together) keeps at once
	// (DefaultMaxInstances when zero): each open tool call mints a new
	// one, so a client calling it in a loop would otherwise hold a broker
	// session per call for Idle. The next instance closes the user's least
	// recently used one that is not answering a call (a later call with
	// its handle opens it afresh, as after Idle); when every one is, the
	// call is refused.
	MaxInstances int
	// SessionIdle is how long an MCP session over streamable HTTP stays
	// open without a request (DefaultSessionIdle when zero): go-sdk then
	// closes it, and a request in it is answered 404 (the client opens a
	// new one). Clients that keep a session open without calling should
	// ping within it.
	SessionIdle time.Duration
	// MaxSessions is how many MCP sessions over streamable HTTP one user
	// (without an authenticator, every caller together) may hold open at
	// once, over every endpoint of the server (DefaultMaxSessions when
	// zero): a request that would open one more is refused 429 until one
	// ends or idles out (sessions.go). A host that serves more apps than
	// that, each at its own endpoint, to clients that keep a session with
	// each, raises it.
	MaxSessions int
	// Logf receives the host-side facts an app is not told; nil discards.
	Logf func(format string, args ...any)
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Server is an MCP server of Snug apps. Serve it over stdio with Run, or
// over streamable HTTP with Handler.
type Server struct {
	opts     Options
	servers  map[string]*mcp.Server // app key -> its MCP server (one for all when shared)
	broker   *broker.Broker
	sign     signer
	apps     map[string]*served
	order    []string
	grants   *grants
	nonce    string    // userHeader's proof that the guard set it (auth.go)
	makers   makers    // install_app's server of each user (make.go)
	sessions *sessions // the user and last use of each MCP session (sessions.go)

	mu        sync.Mutex
	instances map[string]*instance
	byUser    map[string]map[*instance]bool // each user's instances
	closed    bool

	stop chan struct{}
	done chan struct{}
}

type served struct {
	key     string
	doc     []byte
	meta    hostkit.Meta
	uri     string
	domains []string
	tools   map[string]string // frame type (or "part") -> tool name
}

// New builds every app, wires the broker to the capabilities given and
// registers the resources and tools.
func New(ctx context.Context, opts Options) (*Server, error) {
	secret, err := opts.check()
	if err != nil {
		return nil, err
	}
	nonce, err := newNonce()
	if err != nil {
		return nil, fmt.Errorf("mcpapps: %w", err)
	}
	s := &Server{
		opts:      opts,
		sign:      signer{key: secret, maxAge: opts.HandleMaxAge, now: opts.Now},
		apps:      map[string]*served{},
		instances: map[string]*instance{},
		byUser:    map[string]map[*instance]bool{},
		grants:    newGrants(opts.Now),
		nonce:     nonce,
		makers:    makers{users: map[string]*madeServer{}, swept: time.Now()},
		sessions:  newSessions(opts.SessionIdle, opts.MaxSessions),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	if err := s.buildApps(ctx); err != nil {
		return nil, err
	}
	s.broker = s.newBroker()

	s.servers = map[string]*mcp.Server{}
	var shared *mcp.Server
	for _, key := range s.order {
		m := shared
		if m == nil {
			m = s.newMCP()
			if opts.SharedServer {
				shared = m
			}
		}
		s.servers[key] = m
		s.register(m, s.apps[key])
	}
	go s.expire()
	return s, nil
}

// check fills in the options' defaults and refuses ones that contradict
// each other; it returns the handle secret (Secret, or a random one).
func (opts *Options) check() ([]byte, error) {
	if len(opts.Apps) == 0 && opts.Make == nil {
		return nil, errors.New("mcpapps: no apps to serve")
	}
	if opts.Make != nil && (opts.Make.Dir == "" || opts.SharedServer) {
		return nil, errors.New("mcpapps: Make needs a Dir, and each app a server of its own (not SharedServer)")
	}
	if opts.MaxResultBytes == 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.MaxResultBytes < 4096 {
		return nil, fmt.Errorf("mcpapps: MaxResultBytes %d: use 4096 or more", opts.MaxResultBytes)
	}
	if opts.HandleMaxAge == 0 {
		opts.HandleMaxAge = DefaultHandleMaxAge
	}
	if opts.Idle == 0 {
		opts.Idle = DefaultIdle
	}
	if opts.MaxInstances == 0 {
		opts.MaxInstances = DefaultMaxInstances
	}
	if opts.MaxInstances < 0 {
		return nil, fmt.Errorf("mcpapps: MaxInstances %d: use a positive count (zero for the default)", opts.MaxInstances)
	}
	if opts.SessionIdle == 0 {
		opts.SessionIdle = DefaultSessionIdle
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.SessionIdle < 0 || opts.MaxSessions < 0 {
		return nil, fmt.Errorf("mcpapps: SessionIdle %s, MaxSessions %d: use positive values (zero for the defaults)", opts.SessionIdle, opts.MaxSessions)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	switch opts.UI {
	case "":
		opts.UI = UIAuto
	case UIAuto, UIAlways, UINever:
	default:
		return nil, fmt.Errorf("mcpapps: UI mode %q: use auto, always or never", opts.UI)
	}
	if opts.Name == "" {
		opts.Name = "snuggen"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	secret := opts.Secret
	if secret == nil {
		secret = make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, fmt.Errorf("mcpapps: secret: %w", err)
		}
	}
	if len(secret) < 32 {
		return nil, fmt.Errorf("mcpapps: the handle secret has %d bytes; use 32 or more", len(secret))
	}
	if opts.Tokens != nil && opts.Authenticate != nil {
		return nil, errors.New("mcpapps: set Tokens or Authenticate, not both")
	}
	if opts.Tokens != nil && opts.GrantBase == "" {
		return nil, errors.New("mcpapps: Tokens needs GrantBase, the server's public URL, for its protected resource metadata")
	}
	return secret, nil
}

// buildApps builds every app of the options, with the defences in each
// document, and keeps them in order; it refuses a bad or repeated key and
// returns every build's error.
func (s *Server) buildApps(ctx context.Context) error {
	var errs []error
	for _, a := range s.opts.Apps {
		if !hostkit.ValidKey(a.Key) {
			return fmt.Errorf("mcpapps: app key %q: use 1-64 letters, digits, '.', '_' or '-', not starting with '.'", a.Key)
		}
		if _, dup := s.apps[a.Key]; dup {
			return fmt.Errorf("mcpapps: app key %q served twice", a.Key)
		}
		if s.opts.Make != nil && strings.HasPrefix(a.Key, MadePrefix) {
			return fmt.Errorf("mcpapps: app key %q: keys beginning %q are install_app's; rename the app", a.Key, MadePrefix)
		}
		doc, meta, err := a.Build(ctx)
		if err == nil {
			// Every document served carries the defences, whoever built
			// it (a document Build prepared comes out unchanged).
			doc, err = server.PrepareStandalone(doc)
			if err != nil {
				err = fmt.Errorf("mcpapps: app %s: %w", a.Key, err)
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if meta.DisplayName == "" {
			meta.DisplayName = a.Key
		}
		s.apps[a.Key] = &served{key: a.Key, doc: doc, meta: meta, uri: "ui://snug/" + a.Key + ".html", domains: resourceDomains(doc)}
		s.order = append(s.order, a.Key)
	}
	return errors.Join(errs...)
}

// newBroker is the broker on the capabilities the options give: open-url
// always, the agent, the database and the net gate when given.
func (s *Server) newBroker() *broker.Broker {
	opts := s.opts
	bo := broker.Options{
		// open-url: the frame's strict URL check and the per-app rate limit
		// run here; the host then asks the user (ui/open-link).
		OpenURL: broker.OpenURL(openurl.New(hostAsks{}, openurl.Options{Now: opts.Now})),
		Logf:    opts.Logf,
	}
	if opts.Agent != nil {
		bo.Agent = broker.Agent(opts.Agent)
	}
	if opts.Store != nil {
		bo.DB = broker.Store(opts.Store)
	}
	if opts.DB != nil {
		bo.DB = opts.DB
	}
	if opts.Net != nil {
		bo.Net = broker.Netgate(opts.Net, func(key string) netgate.App {
			a := netgate.App{Key: key, Name: key, Confirmer: s}
			if sv := s.apps[key]; sv != nil && sv.meta.DisplayName != key {
				a.Name = sv.meta.DisplayName + " (" + key + ")"
			}
			return a
		})
	}
	return broker.New(bo)
}

// newMCP makes one MCP server, to which register adds apps.
func (s *Server) newMCP() *mcp.Server {
	m := mcp.NewServer(&mcp.Implementation{Name: s.opts.Name, Title: "Snug apps", Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions: "Each open_* tool shows a Snug app, a small interactive HTML app with its own storage, in the conversation.",
		Capabilities: &mcp.ServerCapabilities{
			Tools:      &mcp.ToolCapabilities{},
			Resources:  &mcp.ResourceCapabilities{},
			Extensions: map[string]any{Extension: map[string]any{"mimeTypes": []string{MIMEType}}},
		},
	})
	m.AddReceivingMiddleware(s.textOnly)
	return m
}

// hostAsks is the open-url Confirmer of an MCP server: the check passed, and
// the host asks the user when the view sends ui/open-link.
type hostAsks struct{}

func (hostAsks) ConfirmOpen(context.Context, openurl.Prompt) (openurl.Answer, error) {
	return openurl.Opened, nil
}

// MCP is the go-sdk server that serves app key, for a host that mounts it
// itself; nil for a key not served.
func (s *Server) MCP(key string) *mcp.Server { return s.servers[key] }

// single is the one MCP server of every app, or nil when there are several
// (or install_app's server takes /mcp).
func (s *Server) single() *mcp.Server {
	if s.opts.Make != nil || len(s.order) == 0 {
		return nil
	}
	one := s.servers[s.order[0]]
	for _, m := range s.servers {
		if m != one {
			return nil
		}
	}
	return one
}

// Endpoint is the path under Handler of app key's MCP endpoint: /mcp when
// one server serves every app, else /mcp/<key>.
func (s *Server) Endpoint(key string) string {
	if s.single() != nil {
		return "/mcp"
	}
	return "/mcp/" + key
}

// Keys lists the served apps' keys in order.
func (s *Server) Keys() []string { return slices.Clone(s.order) }

// ResourceURI is app key's resource URI.
func (s *Server) ResourceURI(key string) string { return "ui://snug/" + key + ".html" }

// OpenTool is app key's model-visible tool.
func (s *Server) OpenTool(key string) string { return "open_" + key }

// ErrSeveralServers is Run's refusal of several apps not on a shared server.
var ErrSeveralServers = errors.New("mcpapps: one transport serves one MCP server: serve one app, or set SharedServer")

// Run serves one client over t (mcp.StdioTransport for a desktop client's
// config) until it disconnects or ctx ends. It serves one MCP server: one
// app, or every app with SharedServer. A call the client cancels
// (notifications/cancelled) gets no answer, and a call read before the
// input ends still gets its own (within StdinGrace).
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	m := s.single()
	if s.opts.Make != nil && len(s.order) == 0 {
		m = s.makerFor("")
	}
	if m == nil {
		return ErrSeveralServers
	}
	return m.Run(ctx, settling{t})
}

// Close ends every request in flight (each gets its terminal answer), then
// stops the server's own goroutine. The store and gate stay the caller's.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	return s.broker.Shutdown(ctx)
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// register adds app sv's resource, its open tool and its app-only tools to m.
func (s *Server) register(m *mcp.Server, sv *served) {
	uiMeta := map[string]any{
		"csp":           map[string]any{"connectDomains": []string{}, "resourceDomains": sv.domains},
		"prefersBorder": true,
	}
	m.AddResource(&mcp.Resource{
		URI:         sv.uri,
		Name:        sv.key,
		Title:       sv.meta.DisplayName,
		Description: sv.meta.Description,
		MIMEType:    MIMEType,
		Meta:        mcp.Meta{"ui": uiMeta},
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: sv.uri, MIMEType: MIMEType, Text: string(sv.doc), Meta: mcp.Meta{"ui": uiMeta},
		}}}, nil
	})

	sv.tools = map[string]string{"part": sv.key + "__part"}
	type capTool struct {
		typ, suffix, what string
		on                bool
	}
	for _, c := range []capTool{
		{frame.TypeAppMessage, "ask", "an agent request (snug.ask)", s.opts.Agent != nil},
		{frame.TypeDBRequest, "db", "a storage request (snug.db)", s.opts.Store != nil || s.opts.DB != nil},
		{frame.TypeNetRequest, "net", "a request through the governed network (snug.net.fetch)", s.opts.Net != nil},
		{frame.TypeOpenURLRequest, "open_url", "the check of a link before the host opens it (snug.openUrl)", true},
	} {
		if !c.on {
			continue
		}
		name := sv.key + "__" + c.suffix
		sv.tools[c.typ] = name
		m.AddTool(s.appOnlyTool(sv, name, "Snug app "+sv.key+": "+c.what+". Called by the app itself, with its handle and one "+c.typ+" frame."), s.frameTool(sv, c.typ))
	}
	m.AddTool(s.appOnlyTool(sv, sv.tools["part"], "Snug app "+sv.key+": the next part of an answer too large for one tool result."), s.partTool(sv))

	desc := sv.meta.Description
	if desc == "" {
		desc = sv.meta.DisplayName
	}
	m.AddTool(&mcp.Tool{
		Name:        s.OpenTool(sv.key),
		Title:       "Open " + sv.meta.DisplayName,
		Description: "Show the " + sv.meta.DisplayName + " app in the conversation. " + desc,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		Meta: mcp.Meta{
			"ui":                    map[string]any{"resourceUri": sv.uri, "visibility": []string{"model", "app"}},
			"openai/outputTemplate": sv.uri,
		},
	}, s.openTool(sv))
}

func (s *Server) appOnlyTool(sv *served, name, desc string) *mcp.Tool {
	return &mcp.Tool{
		Name:        name,
		Description: desc,
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"handle":   map[string]any{"type": "string", "description": "the handle from the open tool's result _meta[\"snug/session\"]"},
				"frame":    map[string]any{"type": "object", "description": "one Snug request frame"},
				"transfer": map[string]any{"type": "string", "description": "a part transfer's id"},
			},
			"required": []string{"handle"},
		},
		Meta: mcp.Meta{
			"ui":                      map[string]any{"resourceUri": sv.uri, "visibility": []string{"app"}},
			"openai/visibility":       "private",
			"openai/widgetAccessible": true,
		},
	}
}

// session is what the MCP runtime reads from the open tool's result.
type session struct {
	Handle       string             `json:"handle"`
	InstanceID   string             `json:"instanceId"`
	Capabilities frame.Capabilities `json:"capabilities"`
	Tools        map[string]string  `json:"tools"`
}

func (s *Server) openTool(sv *served) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name := sv.meta.DisplayName
		if !s.uiClient(req) {
			text := name + ": " + sv.meta.Description + "\nThis client does not show MCP Apps (" + MIMEType + "), so the app cannot run here. Run it in a host that does, or in a browser with: snuggen serve"
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}
		user, ok := s.userOf(req.Extra)
		if !ok {
			return toolError(errNoUser.Error()), nil
		}
		h, p, err := s.sign.mint(sv.key, user)
		if err != nil {
			return nil, err
		}
		caps := s.broker.Capabilities()
		caps.Streaming = false // a host's bridge does not forward progress to the view
		return &mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: "Showing " + name + "."}},
			Meta: mcp.Meta{MetaSession: session{
				Handle: h, InstanceID: p.Instance, Capabilities: caps, Tools: sv.tools,
			}},
		}, nil
	}
}

// callArgs are an app-only tool's arguments.
type callArgs struct {
	Handle   string          `json:"handle"`
	Frame    json.RawMessage `json:"frame"`
	Transfer string          `json:"transfer"`
}

// toolError is a refusal the view sees as the tool's error text.
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// caller is who a verified app-only call comes from: the handle's payload
// and the user the call authenticated as.
type caller struct {
	handlePayload
	user string
}

// verify reads the arguments and the handle, which must be app sv's and
// minted for the user the call authenticated as.
func (s *Server) verify(sv *served, req *mcp.CallToolRequest) (callArgs, caller, *mcp.CallToolResult) {
	var a callArgs
	if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
		return a, caller{}, toolError("arguments: " + err.Error())
	}
	user, ok := s.userOf(req.Extra)
	if !ok {
		return a, caller{}, toolError(errNoUser.Error())
	}
	p, err := s.sign.verify(a.Handle)
	if err != nil || p.App != sv.key || p.User != s.sign.userTag(user) {
		return a, caller{}, toolError(errHandle.Error())
	}
	return a, caller{p, user}, nil
}

// frameTool carries one request frame of type typ to the broker.
func (s *Server) frameTool(sv *served, typ string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, c, refused := s.verify(sv, req)
		if refused != nil {
			return refused, nil
		}
		var head struct {
			Type      string `json:"type"`
			RequestID string `json:"requestId"`
		}
		if err := json.Unmarshal(a.Frame, &head); err != nil || head.Type != typ {
			return toolError("frame: this tool takes one " + typ + " frame"), nil
		}
		inst, err := s.instance(c)
		if err != nil {
			return nil, err
		}
		defer inst.done()
		if req.Session != nil {
			inst.setClient(req.Session)
		}
		f, res := inst.do(ctx, a.Frame, head.RequestID)
		if res != nil {
			return res, nil
		}
		return s.result(inst, f)
	}
}

// partTool hands out the next part of an answer sent in parts.
func (s *Server) partTool(sv *served) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, c, refused := s.verify(sv, req)
		if refused != nil {
			return refused, nil
		}
		inst, err := s.instance(c)
		if err != nil {
			return nil, err
		}
		defer inst.done()
		part, more, ok := inst.nextPart(a.Transfer)
		if !ok {
			return toolError("no such transfer (each part is handed out once, in order)"), nil
		}
		sc := map[string]any{"part": part}
		if more {
			sc["next"] = a.Transfer
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "part"}}, StructuredContent: sc}, nil
	}
}

// result turns a terminal frame into the tool's result: the frame as
// structuredContent, or its first part when it is too large for one. An
// error code this server does not know is rendered HOST_ERROR here (R5), so
// the MCP runtime needs no code list.
func (s *Server) result(inst *instance, f frame.Frame) (*mcp.CallToolResult, error) {
	if e := frame.ErrorOf(f); e != nil && !frame.Known(e.Code) {
		e.Code = frame.CodeHostError
	}
	raw, err := frame.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("mcpapps: marshal %s: %w", f.FrameType(), err)
	}
	rid := frame.RequestIDOf(f)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: f.FrameType()}}}
	if g := inst.takeGrant(rid); g != "" {
		res.Meta = mcp.Meta{MetaGrant: g}
	}
	if len(raw) <= s.opts.MaxResultBytes {
		res.StructuredContent = json.RawMessage(raw)
		return res, nil
	}
	parts := split(raw, s.opts.MaxResultBytes-1024)
	transfer := inst.putParts(parts[1:])
	res.StructuredContent = map[string]any{"part": parts[0], "next": transfer}
	return res, nil
}

// split cuts raw into pieces whose JSON string encoding has at most max
// bytes, at UTF-8 character boundaries, so that the pieces joined are raw.
func split(raw []byte, max int) []string {
	var out []string
	for len(raw) > 0 {
		n := min(max, len(raw))
		for {
			for n < len(raw) && n > 0 && raw[n]&0xC0 == 0x80 {
				n-- // not inside a character
			}
			enc, _ := json.Marshal(string(raw[:n]))
			if len(enc) <= max || n < 8 {
				break
			}
			n = n * max / len(enc)
		}
		out = append(out, string(raw[:n]))
		raw = raw[n:]
	}
	return out
}

// uiClient reports whether the calling client renders MCP Apps.
func (s *Server) uiClient(req interface {
	ClientCapabilities() *mcp.ClientCapabilities
}) bool {
	switch s.opts.UI {
	case UIAlways:
		return true
	case UINever:
		return false
	}
	c := req.ClientCapabilities()
	if c == nil {
		return false
	}
	ext, ok := c.Extensions[Extension].(map[string]any)
	if !ok {
		return false
	}
	types, _ := ext["mimeTypes"].([]any)
	for _, t := range types {
		if t == MIMEType {
			return true
		}
	}
	return false
}

// textOnly is the receiving middleware that gives a client without MCP Apps
// text-only tools: no app-only tools, no UI metadata on the open tools.
func (s *Server) textOnly(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		r, ok := req.(interface {
			ClientCapabilities() *mcp.ClientCapabilities
		})
		lr, ok2 := res.(*mcp.ListToolsResult)
		if !ok || !ok2 || s.uiClient(r) {
			return res, err
		}
		out := *lr
		out.Tools = nil
		for _, t := range lr.Tools {
			if ui, _ := t.Meta["ui"].(map[string]any); ui != nil && slices.Equal(asStrings(ui["visibility"]), []string{"app"}) {
				continue
			}
			c := *t
			c.Meta = mcp.Meta{}
			for k, v := range t.Meta {
				if k != "ui" && !strings.HasPrefix(k, "openai/") {
					c.Meta[k] = v
				}
			}
			out.Tools = append(out.Tools, &c)
		}
		if out.Tools == nil {
			out.Tools = []*mcp.Tool{}
		}
		return &out, nil
	}
}

func asStrings(v any) []string {
	switch v := v.(type) {
	case []string:
		return v
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// MaxToolRequestBytes is the largest HTTP request body the endpoint reads:
// the largest frame size class (db, R6) and room for the JSON-RPC envelope
// and the handle around the frame.
const MaxToolRequestBytes = frame.MaxDBFrameBytes + 64<<10

// Handler serves the server over streamable HTTP (a client of protocol
// 2026-07-28 statelessly, an older one with a session, as go-sdk requires):
// each app's MCP server at /mcp/<key>, and at /mcp when one server serves
// every app (Endpoint); the grant pages under /snug/grant/; and lets
// AllowOrigins' pages call it.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	eps := map[*mcp.Server]http.Handler{}
	paths := map[string]bool{}
	for _, key := range s.order {
		m := s.servers[key]
		if eps[m] == nil {
			eps[m] = s.endpoint(m)
		}
		mux.Handle("/mcp/"+key, s.guard("/mcp/"+key, eps[m]))
		paths["/mcp/"+key] = true
	}
	if m := s.single(); m != nil {
		mux.Handle("/mcp", s.guard("/mcp", eps[m]))
		paths["/mcp"] = true
	} else if s.opts.Make != nil {
		mux.Handle("/mcp", s.guard("/mcp", s.makeEndpoint()))
		paths["/mcp"] = true
	} else {
		mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "each app is an MCP server of its own, at /mcp/<key>: "+strings.Join(s.order, ", "), http.StatusNotFound)
		})
	}
	mux.HandleFunc("/snug/grant/{token}", s.grantPage)
	if s.opts.Tokens != nil {
		for ep := range paths {
			mux.Handle(ProtectedResourcePath+ep, s.resourceMetadata(ep))
		}
	}
	return s.cors(mux)
}

// endpoint is m's streamable HTTP endpoint.
func (s *Server) endpoint(m *mcp.Server) http.Handler {
	return s.endpointOf(func(*http.Request) *mcp.Server { return m })
}

// endpointOf is the streamable HTTP endpoint of the server getServer
// names for a request. Its sessions close after SessionIdle without a
// request, and each user holds MaxSessions at most (sessions.go).
func (s *Server) endpointOf(getServer func(*http.Request) *mcp.Server) http.Handler {
	// A tool call carries one request frame: the largest, a db import, is
	// the db size class (R6); go-sdk's default (4 MiB) would refuse a 5 MiB
	// database's import before the broker sees it.
	body := int64(MaxToolRequestBytes)
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{Stateless: true, MaxRequestBodyBytes: body})
	stateful := s.sessions.track(func(r *http.Request) string { return s.userOfHeader(r.Header) },
		mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: body, SessionTimeout: s.opts.SessionIdle}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Mcp-Protocol-Version"); v >= "2026-07-28" {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// GrantHandler serves the grant pages alone, for a server that speaks MCP
// over stdio and needs a loopback page only to ask the user.
func (s *Server) GrantHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/snug/grant/{token}", s.grantPage)
	return mux
}

// cors answers AllowOrigins' preflights and marks their responses readable.
func (s *Server) cors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && slices.Contains(s.opts.AllowOrigins, origin) && strings.HasPrefix(r.URL.Path, "/mcp") {
			hd := w.Header()
			hd.Set("Access-Control-Allow-Origin", origin)
			hd.Add("Vary", "Origin")
			hd.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate")
			if r.Method == http.MethodOptions {
				hd.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
				hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID")
				hd.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}
