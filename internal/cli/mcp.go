package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/mcpapps"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/hostkit/proxyauth"
	"github.com/snuggen/snuggen/hostkit/store"
)

type mcpOptions struct {
	serveOptions
	http      string
	ui        string
	origins   []string
	maxResult int
	idle      time.Duration // --session-idle
	sessions  int           // --max-sessions
	instances int           // --max-instances
	shared    bool
	install   bool // --install-app
	// Users (mcp_auth.go); --user-header and its proof are serve's.
	tokenFile      string
	authServers    []string
	insecureNoAuth bool
	publicURL      string
	ready          func(s *mcpapps.Server, base string) // tests: called once serving
}

func newMCPCmd(io *IO) *cobra.Command {
	o := &mcpOptions{serveOptions: serveOptions{getenv: os.Getenv}}
	c := &cobra.Command{
		Use:   "mcp FILE|DIR...",
		Short: "Serve apps to MCP Apps hosts (Claude, ChatGPT, VS Code, ...) as an MCP server",
		Long: `mcp serves Snug apps to any host of MCP Apps (the MCP UI extension
io.modelcontextprotocol/ui): each app is a ui://snug/<key>.html resource built
with the MCP flavour of the runtime, shown by its open_<key> tool, with its
agent (the offline agent by default), its SQLite storage under --data, the
governed network and open-url working through app-only tools.

Each app is an MCP server of its own: a host forwards a view's tool calls
to the view's server, so apps on one server could open and use each other's
storage. Without --http it speaks MCP over stdin and stdout for one app, for
a desktop client's config (one entry per app; nothing else is written to
stdout; logs go to stderr). With --http it serves streamable HTTP at
http://ADDR/mcp/<key> per app (at /mcp when it serves one app), and prints,
before it accepts work, an "mcp <url>" line per endpoint followed by an
"app <key> <open tool>" line per app served there. --shared-server puts
every app on one server (/mcp, or stdio): only for apps that may read and
write each other's data.

Users: over --http every request names its user, and every database, net
grant, agent budget and audit entry is kept per (user, app). --token-file
makes the server an OAuth 2.1 protected resource as MCP's authorization
has it: a file (mode 600) of "TOKEN USER" lines, the bearer token checked
on every request, a request without a valid one answered 401 with the
protected resource metadata (--authorization-server names the issuers
there). --user-header takes the user from the authenticating proxy in
front, as for snuggen serve. Without either every caller is one user: an
address other than loopback is then refused unless --insecure-no-auth.
A request with an Origin header other than an --allow-origin is refused.
An HTTP session (clients before protocol 2026-07-28) closes after
--session-idle without a request, and one user (without an authenticator,
every caller together) holds --max-sessions at most: the next is refused
429 until one ends or idles out. Each open tool call starts an app instance;
one user keeps --max-instances at most, the next closing their least
recently used one (its handle opens it afresh).
--public-url is the URL clients reach the server at (https behind a proxy),
for the endpoints printed, the grant pages and the resource metadata.

A client that does not list text/html;profile=mcp-app gets text-only tools
(--ui always or never overrides that). The net confirm dialog becomes an
elicitation where the client takes one, else a grant page this server serves
on loopback (opened in the user's browser by the app's host). What MCP Apps
cannot carry is listed in docs/mcp-apps.md.

--install-app offers the host's model a tool, install_app {name, html}, on
an MCP server of its own (http://ADDR/mcp, printed first, followed by a
"tool install_app" line; over stdio, with no app given): the model writes
a Snug app, the tool builds it with --strict and answers the diagnostics
(line, why, fix) until it builds, then keeps it for the user under --data's
mcp-apps/ folder and offers it there as a new ui:// resource with its
open_made-<name> tool (the client is told the lists changed). The apps
installed this way share that server: each user's are one trust domain.

A FILE or DIR is found as by snuggen serve; a file already built with
snuggen build --target mcp-app is served as it is. Keys, --agent, --model,
--agent-url and --config are those of snuggen serve.`,
		Example: `  snuggen mcp examples/                          # stdio, for a desktop client's config
  snuggen mcp examples/ --http 127.0.0.1:8765    # streamable HTTP
  snuggen mcp app.html --agent anthropic --model claude-sonnet-4-5
  snuggen mcp --install-app --http 127.0.0.1:8765  # the host's model writes apps`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runMCP(ctx, io, o, args)
		},
	}
	o.mcpFlags(c)
	o.agentFlags(c)
	c.ValidArgsFunction = appArgs
	_ = c.RegisterFlagCompletionFunc("data", dirs)
	_ = c.RegisterFlagCompletionFunc("config", jsonFiles)
	_ = c.RegisterFlagCompletionFunc("ui", cobra.FixedCompletions([]string{string(mcpapps.UIAuto), "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// mcpFlags declares snuggen mcp's own flags on c (the agent's are
// agentFlags').
func (o *mcpOptions) mcpFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.http, "http", "", "serve streamable HTTP on this address (127.0.0.1:8765) instead of stdio")
	f.StringVar(&o.data, "data", "", "directory for the apps' SQLite files, net grants and the handle key (default: a per-user data directory)")
	f.StringVar(&o.config, "config", "", "JSON file of net connections and development allowances")
	f.StringVar(&o.ui, "ui", string(mcpapps.UIAuto), "when tools carry their MCP Apps metadata: auto (clients that list the MIME type), always or never")
	f.StringSliceVar(&o.origins, "allow-origin", nil, "a browser origin (http://127.0.0.1:5173) whose pages may call the HTTP endpoint; repeatable")
	f.BoolVar(&o.install, "install-app", false, "offer the host's model install_app, which builds and keeps the apps it writes (at /mcp over --http)")
	f.BoolVar(&o.shared, "shared-server", false, "serve every app on one MCP server; each app can then open and use every other app's storage")
	f.IntVar(&o.maxResult, "max-result", mcpapps.DefaultMaxResultBytes, "largest tool result, in bytes; a larger answer goes in parts")
	f.DurationVar(&o.idle, "session-idle", mcpapps.DefaultSessionIdle, "with --http: close an MCP session after this long without a request (the client opens a new one)")
	f.IntVar(&o.sessions, "max-sessions", mcpapps.DefaultMaxSessions, "with --http: the most MCP sessions one user (without an authenticator, every caller together) holds at once; one more is refused 429")
	f.IntVar(&o.instances, "max-instances", mcpapps.DefaultMaxInstances, "the most app instances (open views) one user keeps at once; one more closes the least recently used")
	f.StringVar(&o.tokenFile, "token-file", "", "with --http: a file (mode 600) of bearer tokens, \"TOKEN USER\" a line; every request must carry one (MCP authorization)")
	f.StringSliceVar(&o.authServers, "authorization-server", nil, "with --token-file: an OAuth authorization server that issues the tokens, named in the protected resource metadata (repeatable)")
	f.StringVar(&o.userHeader, "user-header", "", "with --http: take the signed-in user from this header, set by the authenticating proxy in front (believed only with --proxy-secret-file or --trusted-proxy)")
	f.StringVar(&o.proxySecretFile, "proxy-secret-file", "", "with --user-header: a file (mode 600) of the secret the proxy sends in "+proxyauth.SecretHeader+", one a line")
	f.StringSliceVar(&o.trustedProxies, "trusted-proxy", nil, "with --user-header: the proxy's address or prefix (repeatable); connections from elsewhere are refused")
	f.BoolVar(&o.insecureNoAuth, "insecure-no-auth", false, "with --http on an address other than loopback and no --token-file or --user-header: serve every caller as one user, sharing its data and grants")
	f.StringVar(&o.publicURL, "public-url", "", "with --http: the URL clients reach this server at (default http://<the address listened on>)")
}

// runMCP serves the apps named in args (or install_app's server) until ctx
// ends: the flags and apps checked, the host's parts opened, the listener,
// the server, then MCP over stdio or HTTP.
func runMCP(ctx context.Context, io *IO, o *mcpOptions, args []string) error {
	// The flags first: a bad one is reported before any file is read.
	backend, err := o.backend()
	if err != nil {
		return err
	}
	if o.idle <= 0 || o.sessions <= 0 {
		return usageError("--session-idle %s, --max-sessions %d: use a positive duration and a positive count", o.idle, o.sessions)
	}
	if o.instances <= 0 {
		return usageError("--max-instances %d: use a positive count", o.instances)
	}
	found, err := o.findMCPApps(args)
	if err != nil {
		return err
	}
	tokens, authenticate, err := o.mcpAuth()
	if err != nil {
		return err
	}
	if o.http == "" && len(found) > 1 && !o.shared {
		return usageError("%d apps over stdio would share one MCP server, where each app can open and use every other app's storage: run one snuggen mcp per app (one entry each in the client's config), serve them with --http (one endpoint per app), or pass --shared-server if they may share their data", len(found))
	}
	if o.agentFor != nil {
		backend = o.agentFor
	}
	dataDir, netCfg, err := dataAndNet(o.data, o.config)
	if err != nil {
		return err
	}
	apps, err := readMCPApps(found)
	if err != nil {
		return err
	}
	secret, err := handleSecret(dataDir)
	if err != nil {
		return &ExitError{Code: exitFailure, Err: err}
	}
	st, err := store.Open(filepath.Join(dataDir, "db"), store.Options{})
	if err != nil {
		return &ExitError{Code: exitFailure, Err: err}
	}
	defer st.Close()
	gate, err := netgate.New(netCfg, netgate.WithGrantsFile(filepath.Join(dataDir, "grants.json")))
	if err != nil {
		return &ExitError{Code: exitFailure, Err: err}
	}
	defer gate.Close()

	// The listener comes first: the grant pages' address is part of the
	// server's options. Over stdio it serves the grant pages alone.
	ln, base, err := o.listenMCP(tokens != nil || authenticate != nil)
	if err != nil {
		return err
	}
	defer ln.Close()

	logf := stderrLogOf(io.Err, "mcp")
	opts := o.serverOptions(dataDir, base, logf)
	opts.Apps = apps
	opts.Agent = agent.NewBridge(backend, agent.Options{Timeout: hostkit.DefaultAgentTimeout, Log: func(instance string, err error) {
		logf("agent request of instance %s failed: %v", instance, err)
	}})
	opts.Store, opts.Net, opts.Secret = st, gate, secret
	opts.Tokens, opts.Authenticate = tokens, authenticate
	srv, err := mcpapps.New(ctx, opts)
	if err != nil {
		return &ExitError{Code: exitFailure, Err: err}
	}
	return o.serveMCP(ctx, io, srv, ln, base, logf)
}

// findMCPApps checks that args and the flags ask for something to serve
// and finds the apps args name.
func (o *mcpOptions) findMCPApps(args []string) ([]*servedApp, error) {
	switch {
	case len(args) == 0 && !o.install:
		return nil, usageError("snuggen mcp needs the apps to serve (FILE or DIR), or --install-app")
	case o.install && o.shared:
		return nil, usageError("--install-app and --shared-server: install_app's apps get a server of their own; leave out --shared-server")
	case o.install && o.http == "" && len(args) > 0:
		return nil, usageError("over stdio --install-app serves install_app's server alone: give no app, or serve them with --http")
	case len(args) > 0:
		return findApps(args)
	}
	return nil, nil
}

// readMCPApps reads each app found: a file built for MCP Apps is served as
// it is, a source is built by the server, and one built for Snug hosts is
// a usage error.
func readMCPApps(found []*servedApp) ([]mcpapps.App, error) {
	var apps []mcpapps.App
	for _, a := range found {
		doc, err := os.ReadFile(a.path)
		if err != nil {
			return nil, &ExitError{Code: exitUsage, Err: err}
		}
		switch {
		case mcpapps.IsBuilt(doc):
			apps = append(apps, mcpapps.BuiltApp(a.key, doc))
		case a.built:
			return nil, usageError("%s is built for Snug hosts; build it with --target mcp-app, or give its source", a.path)
		default:
			apps = append(apps, mcpapps.FileApp(a.key, a.path))
		}
	}
	return apps, nil
}

// listenMCP listens on --http (over stdio, on a loopback port for the
// grant pages) and returns the listener and the base URL clients reach it
// at. It refuses an address beyond loopback that no authenticator guards
// (authed says whether one does) unless --insecure-no-auth.
func (o *mcpOptions) listenMCP(authed bool) (net.Listener, string, error) {
	addr := o.http
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", &ExitError{Code: exitFailure, Err: fmt.Errorf("mcp: listen on %s: %w", addr, err)}
	}
	if o.http != "" && !loopbackListener(ln) && !authed && !o.insecureNoAuth {
		ln.Close()
		return nil, "", usageError("--http %s reaches beyond this machine, and without an authenticator every caller would share one user's apps, data and net grants: add --token-file (bearer tokens, a user each) or --user-header (the user from your proxy), or --insecure-no-auth if everyone who can reach it may share them", o.http)
	}
	base := "http://" + ln.Addr().String()
	if o.publicURL != "" {
		base = strings.TrimRight(o.publicURL, "/")
	}
	return ln, base, nil
}

// serverOptions is the server's options that come from the flags: the
// caller adds the apps, the agent, the host's parts and the authenticator.
func (o *mcpOptions) serverOptions(dataDir, base string, logf func(string, ...any)) mcpapps.Options {
	version := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	var mk *mcpapps.MakeOptions
	if o.install {
		mk = &mcpapps.MakeOptions{Dir: filepath.Join(dataDir, "mcp-apps")}
	}
	return mcpapps.Options{
		Make:                 mk,
		SharedServer:         o.shared,
		GrantBase:            base,
		AllowOrigins:         o.origins,
		InsecureNoAuth:       o.insecureNoAuth,
		AuthorizationServers: o.authServers,
		UI:                   mcpapps.UIMode(o.ui),
		MaxResultBytes:       o.maxResult,
		SessionIdle:          o.idle,
		MaxSessions:          o.sessions,
		MaxInstances:         o.instances,
		Version:              version,
		Logf:                 logf,
	}
}

// serveMCP serves srv on ln (over stdio, the grant pages alone, and MCP on
// stdin and stdout) until ctx ends, stdio closes or serving fails, then
// closes the server.
func (o *mcpOptions) serveMCP(ctx context.Context, io *IO, srv *mcpapps.Server, ln net.Listener, base string, logf func(string, ...any)) error {
	handler := srv.Handler()
	if o.http == "" {
		handler = srv.GrantHandler() // stdio: the loopback port shows grant pages, nothing else
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(sctx)
		_ = hs.Shutdown(sctx)
	}()

	if o.http != "" {
		printEndpoints(io, srv, base, o.install)
	} else {
		logf("serving %d apps over stdio; grant pages at %s", len(srv.Keys()), base)
	}
	if o.ready != nil {
		o.ready(srv, base)
	}
	if o.http == "" {
		runErr := make(chan error, 1)
		go func() { runErr <- srv.Run(ctx, &mcp.StdioTransport{}) }()
		select {
		case err := <-runErr:
			if err != nil && !errors.Is(err, context.Canceled) {
				return &ExitError{Code: exitFailure, Err: fmt.Errorf("mcp: %w", err)}
			}
			return nil
		case err := <-serveErr:
			return &ExitError{Code: exitFailure, Err: fmt.Errorf("mcp: %w", err)}
		}
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-serveErr:
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("mcp: %w", err)}
	}
}

// printEndpoints writes an "mcp <url>" line per MCP endpoint, each followed
// by the "app <key> <open tool>" lines of the apps it serves.
func printEndpoints(io *IO, srv *mcpapps.Server, base string, install bool) {
	if install {
		fmt.Fprintf(io.Out, "mcp %s/mcp\ntool %s\n", base, mcpapps.InstallTool)
	}
	last := ""
	for _, key := range srv.Keys() {
		if ep := srv.Endpoint(key); ep != last {
			fmt.Fprintf(io.Out, "mcp %s%s\n", base, ep)
			last = ep
		}
		fmt.Fprintf(io.Out, "app %s %s\n", key, srv.OpenTool(key))
	}
}

// handleSecret is the key that signs the views' handles, kept in the data
// directory so that a conversation's app still works after a restart.
func handleSecret(dir string) ([]byte, error) {
	p := filepath.Join(dir, "mcp-handle.key")
	b, err := os.ReadFile(p)
	if err == nil && len(b) >= 32 {
		return b, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("mcp: read %s: %w", p, err)
	}
	b = make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return handleSecret(dir) // another snuggen mcp wrote it first
	}
	if err != nil {
		return nil, fmt.Errorf("mcp: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("mcp: write %s: %w", p, err)
	}
	return b, f.Close()
}
