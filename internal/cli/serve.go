package cli

import (
	"context"
	"fmt"
	stdio "io"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen/conform"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/agentenv"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/maker"
	"github.com/snuggen/snuggen/hostkit/maker/smoke"
	"github.com/snuggen/snuggen/hostkit/metrics"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/hostkit/proxyauth"
	"github.com/snuggen/snuggen/hostkit/store"
	"github.com/snuggen/snuggen/internal/guide"
	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

type serveOptions struct {
	addr     string
	data     string
	agent    string
	agentURL string
	model    string
	config   string
	devLoop  []string // --dev-loopback
	watch    bool
	maxReply string        // --agent-max-reply, a size
	dbLimit  time.Duration // --db-timeout
	getenv   func(string) string
	ready    func(h *hostkit.Host) // tests: called once the host is listening

	// Replicated mode (docs/scale.md) and users.
	postgres    string
	objectStore string
	clusterAddr string
	advertise   string
	leaseTTL    time.Duration
	idleRelease time.Duration
	staging     string
	userHeader  string
	// proxySecretFile and trustedProxies prove a request came through the
	// proxy that sets userHeader.
	proxySecretFile   string
	trustedProxies    []string
	clusterSecretFile string        // replicated mode: the forwarding secrets' file
	clusterSecrets    []string      // and what it holds, read before openCluster
	agentFor          agent.Backend // tests: the agent instead of --agent's

	// The operator's view: --metrics-addr and --log-format, and the
	// metrics the host and replicated mode count into.
	metricsAddr string
	logFormat   string
	metrics     *metrics.Metrics
}

func newServeCmd(io *IO) *cobra.Command {
	o := &serveOptions{getenv: os.Getenv}
	c := &cobra.Command{
		Use:   "serve FILE|DIR...",
		Short: "Run apps in a local host: the runner page, the agent, storage, network and open-url",
		Long: `serve runs a local Snug host. Each app runs in a sandboxed iframe of the runner
page; everything it needs crosses frames the host brokers: the agent (the
offline agent by default), per-app SQLite under --data, the governed network
(every new origin asks you first), and open-url (opened from your click).

A FILE is an app's HTML: raw (packaged on the fly, as snuggen build would) or
already built. A DIR holds apps: its *.html files and its subfolders'
app.html or index.html. One line per app, "app <appId> <url>", is printed
before the server accepts work; the URL opens the runner with that app.
Open it as printed (127.0.0.1, not localhost: the server answers only its own
address). Each app's document comes from a site of its own,
http://<app>.localhost:<port>/, so a busy app freezes only itself; your
browser resolves *.localhost to this machine by itself.

The agent is chosen as every Snug host chooses it (hostkit/agent/agentenv):
SNUG_AGENT=offline|openai|anthropic, then OPENAI_API_KEY, OPENAI_BASE_URL,
OPENAI_MODEL or ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL; --agent,
--agent-url and --model override them. --config names the governed network's JSON file:
{"connections": [...], "deny": [...], "devHttpHosts": [...], "rate": {...}}
(the same file snuggen net check reads). Without it every new origin asks
you in the runner's dialog. Ctrl-C shuts down after every request in flight
got its terminal frame. --dev-loopback ADDRESS:PORT lets the apps reach a
local or mock API on this machine while you develop (over http too; the
runner shows it, the log says it, nothing else on loopback is reachable).
With an agent that can write apps (openai or anthropic), the runner shows
a "New app" box, and "Change" on an app it made: the sentence runs the
snuggen make loop with that agent, each round's diagnostics shown, and the
app is kept in --data's apps/ folder (listed again on the next start, its
earlier versions in apps/NAME/.versions). A make that fails installs nothing.
What the apps are not told (a handler's panic with
its stack, the detail of an agent failure, a refused request) is logged to
stderr with log/slog: one record a line, as key=value text or, with
--log-format json, as JSON objects, each with the app's key and the request
as attributes. GET /healthz (liveness) and /readyz (readiness: the store
is open; in replicated mode PostgreSQL answers and the leases are renewed)
are answered on --addr; --metrics-addr serves them too, with /metrics, the
Prometheus metrics (docs/architecture.md, "Operations"), for the operator's
network only.`,
		Example: `  snuggen serve examples/todo/app.html
  snuggen serve examples/ --addr 127.0.0.1:0 --watch
  OPENAI_API_KEY=… snuggen serve app.html --agent openai --model gpt-4o-mini
  snuggen serve app.html --agent openai --agent-url http://127.0.0.1:11434/v1 --model llama3.2
  snuggen serve app.html --config net.json --data ./data
  snuggen serve app.html --dev-loopback 127.0.0.1:8080   # the app may fetch http://127.0.0.1:8080/…
  snuggen serve apps/ --metrics-addr 127.0.0.1:9090 --log-format json`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, io, o, args)
		},
	}
	o.serveFlags(c)
	o.agentFlags(c)
	c.ValidArgsFunction = appArgs
	_ = c.RegisterFlagCompletionFunc("data", dirs)
	_ = c.RegisterFlagCompletionFunc("config", jsonFiles)
	return c
}

// serveFlags declares snuggen serve's own flags on c (the agent's are
// agentFlags').
func (o *serveOptions) serveFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:7878", "address to listen on; port 0 picks a free port")
	f.StringVar(&o.data, "data", "", "directory for the apps' SQLite files and net grants (default: a per-user data directory)")
	f.StringVar(&o.config, "config", "", "JSON file of net connections and development allowances")
	f.StringArrayVar(&o.devLoop, "dev-loopback", nil, "development only: let apps reach the local service at ADDRESS:PORT (127.0.0.1:8080, localhost:8080 or a port), over http too; nothing else on loopback (repeatable)")
	f.BoolVar(&o.watch, "watch", false, "rebuild an app when its files change and reload its frames")
	f.StringVar(&o.maxReply, "agent-max-reply", "4MiB", "the most reply text read from the agent (B, KiB or MiB); a longer reply is cut and answered PARSE_FAILED")
	f.DurationVar(&o.dbLimit, "db-timeout", store.DefaultStatementTimeout, "the longest one SQL statement or import check of an app may run (DB_TIMEOUT past it)")
	f.StringVar(&o.postgres, "postgres", "", "replicated mode: PostgreSQL URL for leases and host state (with --object-store; see docs/scale.md)")
	f.StringVar(&o.objectStore, "object-store", "", "replicated mode: s3://bucket/prefix?endpoint=… where the app databases are replicated")
	f.StringVar(&o.clusterAddr, "cluster-addr", "127.0.0.1:0", "replicated mode: address of the listener other replicas forward requests to")
	f.StringVar(&o.advertise, "cluster-advertise", "", "replicated mode: URL other replicas reach --cluster-addr at (default http://<its address>)")
	f.DurationVar(&o.leaseTTL, "lease-ttl", 0, "replicated mode: how long a database lease lasts unrenewed (default 10s): the longest failover wait")
	f.DurationVar(&o.idleRelease, "idle-release", 0, "replicated mode: give a database up after this long without a request (default 2m; negative: never)")
	f.StringVar(&o.staging, "cluster-staging", "", "replicated mode: stage uploads in `DIR`, or \"beside\" each database (default: a private directory on /dev/shm when it is a memory file system with 1 GiB free, which keeps the local disk out of each acknowledgement; else beside each database)")
	f.StringVar(&o.userHeader, "user-header", "", "take the signed-in user from this request header at the page's WebSocket (set by the authenticating proxy in front, believed only with --proxy-secret-file or --trusted-proxy; any other connection is refused)")
	f.StringVar(&o.proxySecretFile, "proxy-secret-file", "", "with --user-header: a file (mode 600) of the secret the proxy sends in "+proxyauth.SecretHeader+", one a line (the first current, the next still accepted during a rotation)")
	f.StringSliceVar(&o.trustedProxies, "trusted-proxy", nil, "with --user-header: the proxy's address or prefix (repeatable); connections from elsewhere are refused")
	f.StringVar(&o.clusterSecretFile, "cluster-secret-file", "", "replicated mode: a file (mode 600) of the secret replicas sign forwarded requests with, one a line (the first signs; every one is accepted, for a rotation); the same file on every replica")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve GET /metrics (Prometheus), /healthz and /readyz on this address too (the operator's network only; off when empty)")
	f.StringVar(&o.logFormat, "log-format", "text", "the log's format on stderr: text (key=value) or json (one object a line)")
	_ = c.RegisterFlagCompletionFunc("log-format", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
}

// openCluster opens replicated mode; nil in a build without it (the
// cluster build tag adds it: the default build stays free of its
// dependencies and their start-up cost).
var openCluster func(ctx context.Context, o *serveOptions, dataDir string, logf func(string, ...any)) (hostkit.Cluster, error)

// clusterOptions turns --postgres and --object-store into the host's
// replicated mode, checked before anything is served.
func clusterOptions(ctx context.Context, o *serveOptions, dataDir string, logf func(string, ...any)) ([]hostkit.Option, error) {
	var opts []hostkit.Option
	auth, err := o.userAuth()
	if err != nil {
		return nil, err
	}
	if auth != nil {
		opts = append(opts, hostkit.WithAuthenticate(auth))
	}
	if o.postgres == "" && o.objectStore == "" {
		if o.clusterSecretFile != "" {
			return nil, usageError("--cluster-secret-file goes with --postgres and --object-store")
		}
		return opts, nil
	}
	if o.postgres == "" || o.objectStore == "" {
		return nil, usageError("replicated mode needs both --postgres and --object-store")
	}
	if openCluster == nil {
		return nil, usageError("this snuggen is built without replicated mode: build it with go build -tags cluster ./cmd/snuggen")
	}
	if o.clusterSecretFile == "" {
		return nil, usageError("replicated mode needs --cluster-secret-file: the same file of a secret (openssl rand -hex 32 > FILE; chmod 600 FILE) on every replica")
	}
	if o.clusterSecrets, err = readSecretFile("--cluster-secret-file", o.clusterSecretFile); err != nil {
		return nil, err
	}
	c, err := openCluster(ctx, o, dataDir, logf)
	if err != nil {
		return nil, &ExitError{Code: exitFailure, Err: err}
	}
	return append(opts, hostkit.WithCluster(c)), nil
}

// makeOption turns on the runner's make boxes (hostkit.WithMake) with an
// agent that may answer a whole app, and a smoke run in Chromium when one
// is found. The host shows the boxes only when that agent can write apps.
func (o *serveOptions) makeOption(logf func(string, ...any)) hostkit.Option {
	mo := hostkit.MakeOptions{Log: logf, Guide: guide.Render}
	if o.agentFor == nil {
		w := *o
		w.getenv = writerEnv(o.getenv)
		if b, err := w.backend(); err == nil {
			mo.Agent = b
		}
	}
	if exe, err := conform.FindChromium(); err == nil {
		mo.Smoke = func(ctx context.Context) (func(context.Context, []byte) ([]maker.Finding, error), func(), error) {
			br, err := smoke.Start(ctx, exe)
			if err != nil {
				return nil, nil, err
			}
			return br.Run, br.Close, nil
		}
	}
	return hostkit.WithMake(mo)
}

// dirs completes a flag whose value is a folder.
func dirs(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// jsonFiles completes a flag whose value is a JSON file.
func jsonFiles(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"json"}, cobra.ShellCompDirectiveFilterFileExt
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// servedApp is one app found on the command line.
type servedApp struct {
	key   string
	path  string // the HTML file
	built bool   // already built: served as is

	mu     sync.Mutex
	inputs []string // the files its last build read (pack.Result.Inputs)
}

// watched is what serve --watch polls for the app: its page, the files its
// last build read and their folders.
func (a *servedApp) watched() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return inputSet(a.path, a.inputs)
}

// app is the app as the host installs it: a built page as it is, a raw one
// packaged on every build, recording what the build read for --watch.
func (a *servedApp) app() (hostkit.App, error) {
	if a.built {
		doc, err := pack.ReadPage(a.path)
		if err != nil {
			return hostkit.App{}, &ExitError{Code: exitUsage, Err: err}
		}
		return hostkit.BuiltApp(a.key, doc, metaFromBuilt(doc, a.key)), nil
	}
	return hostkit.App{Key: a.key, Build: func(ctx context.Context) ([]byte, hostkit.Meta, error) {
		doc, meta, inputs, err := hostkit.PackFile(ctx, a.path)
		if inputs != nil {
			a.mu.Lock()
			a.inputs = inputs
			a.mu.Unlock()
		}
		return doc, meta, err
	}}, nil
}

// runServe serves the apps named in args until ctx ends: the flags and
// apps checked, the host made, its lines printed, then served (and
// watched with --watch).
func runServe(ctx context.Context, io *IO, o *serveOptions, args []string) error {
	// The flags first: a bad one is reported before any file is read.
	backend, err := o.backend()
	if err != nil {
		return err
	}
	logger, err := newLogger(io.Err, o.logFormat)
	if err != nil {
		return err
	}
	found, err := findApps(args)
	if err != nil {
		return err
	}
	maxReply, err := o.checkLimits()
	if err != nil {
		return err
	}
	if o.agentFor != nil {
		backend = o.agentFor
	}
	dataDir, netCfg, err := dataAndNet(o.data, o.config)
	if err != nil {
		return err
	}
	dev, err := devLoopback(o.devLoop)
	if err != nil {
		return err
	}
	apps, err := hostApps(found)
	if err != nil {
		return err
	}
	if o.metrics == nil {
		o.metrics = metrics.New()
	}
	extra, err := clusterOptions(ctx, o, dataDir, logfOf(logger, "cluster"))
	if err != nil {
		return err
	}
	h, err := hostkit.New(append([]hostkit.Option{
		hostkit.WithAddr(o.addr),
		hostkit.WithApps(apps...),
		hostkit.WithAgent(backend),
		hostkit.WithDataDir(dataDir),
		hostkit.WithStoreOptions(store.Options{StatementTimeout: o.dbLimit}),
		hostkit.WithMaxReplyBytes(maxReply),
		hostkit.WithNet(netCfg, netgate.WithDevLoopback(dev...)),
		// An app that does not build is listed with its diagnostics, in
		// the runner and below; the others are served.
		hostkit.WithBrokenApps(),
		// What an app is not told goes to the person running serve: a
		// handler's panic with its stack, the detail of an agent failure.
		hostkit.WithBrokerOptions(func(bo *broker.Options) { bo.Logger = logger }),
		hostkit.WithAgentOptions(agent.Options{Log: func(instance string, err error) {
			logger.Warn("agent request failed", "instance", instance, "err", err.Error())
		}}),
		o.makeOption(logfOf(logger, "make")),
		hostkit.WithMetrics(o.metrics),
		hostkit.WithOpsAddr(o.metricsAddr),
	}, extra...)...)
	if err != nil {
		return &ExitError{Code: exitFailure, Err: err}
	}
	if err := o.announce(io, h, logger, dev); err != nil {
		_ = h.Shutdown(context.Background())
		return err
	}
	if o.ready != nil {
		o.ready(h)
	}
	return o.serveHost(ctx, io, h, found)
}

// announce says what h serves before it serves: the --dev-loopback
// allowance in the log, the apps that do not build (an error unless
// --watch), the app lines and the operator endpoints.
func (o *serveOptions) announce(io *IO, h *hostkit.Host, logger *slog.Logger, dev []netip.AddrPort) error {
	if len(dev) > 0 {
		logfOf(logger, "serve")("development: apps may reach %s on this machine (--dev-loopback), over http too; nothing else on loopback; the runner shows it", joinAddrs(dev))
	}
	if err := reportBroken(io, h, o.watch); err != nil {
		return err
	}
	printServing(io, h)
	if u := h.OpsURL(); u != "" {
		logger.Info("operator endpoints", "metrics", u+"/metrics", "healthz", u+"/healthz", "readyz", u+"/readyz")
	}
	return nil
}

// checkLimits checks --agent-max-reply and --db-timeout and returns the
// former in bytes (0 for the default).
func (o *serveOptions) checkLimits() (maxReply int, err error) {
	if o.maxReply != "" {
		if maxReply, err = parseSize(o.maxReply); err != nil || maxReply <= 0 {
			return 0, usageError("--agent-max-reply %q: want a positive size such as 4MiB, 512KiB or 1000000", o.maxReply)
		}
	}
	if o.dbLimit < 0 {
		return 0, usageError("--db-timeout %s: want a positive duration such as 5s", o.dbLimit)
	}
	return maxReply, nil
}

// hostApps is the apps found as the host installs them.
func hostApps(found []*servedApp) ([]hostkit.App, error) {
	var apps []hostkit.App
	for _, a := range found {
		app, err := a.app()
		if err != nil {
			return nil, err
		}
		apps = append(apps, app)
	}
	return apps, nil
}

// printServing writes an app line per app that built and, in replicated
// mode, the replica line. The lines come before Serve, so a script that
// reads the first line knows the server is listening when it gets it.
func printServing(io *IO, h *hostkit.Host) {
	for _, key := range h.Apps.Keys() {
		if h.Apps.Problems(key) == nil {
			printAppLine(io, h, key)
		}
	}
	if r, ok := h.Cluster.(interface {
		ID() string
		InternalURL() string
	}); ok {
		fmt.Fprintf(io.Out, "replica %s %s\n", r.ID(), r.InternalURL())
	}
}

// serveHost serves h (watching the apps found with --watch) until ctx ends
// or serving fails, then stops the watch and shuts the host down.
func (o *serveOptions) serveHost(ctx context.Context, io *IO, h *hostkit.Host, found []*servedApp) error {
	serveErr := make(chan error, 1)
	go func() { serveErr <- h.Serve() }()
	var watchDone chan struct{}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if o.watch {
		watchDone = make(chan struct{})
		go func() {
			defer close(watchDone)
			watchApps(wctx, io, h, found)
		}()
	}
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		if err != nil {
			stopWatch()
			if watchDone != nil {
				<-watchDone
			}
			_ = h.Shutdown(context.Background())
			return &ExitError{Code: exitFailure, Err: fmt.Errorf("serve: %w", err)}
		}
	}
	stopWatch()
	if watchDone != nil {
		<-watchDone
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Shutdown(sctx); err != nil {
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("serve: shutdown: %w", err)}
	}
	return nil
}

// printAppLine prints "app <appId> <url>" for an app that builds.
func printAppLine(io *IO, h *hostkit.Host, key string) {
	m, _ := h.Apps.Meta(key)
	id := m.AppID
	if id == "" {
		id = key
	}
	fmt.Fprintf(io.Out, "app %s %s\n", id, h.AppURL(key))
}

// reportBroken prints each app that does not build, with its diagnostics,
// to stderr. With no app built there is nothing to serve: an error, unless
// --watch waits for a fix.
func reportBroken(io *IO, h *hostkit.Host, watch bool) error {
	built := 0
	var all []string
	for _, key := range h.Apps.Keys() {
		p := h.Apps.Problems(key)
		if p == nil {
			built++
			continue
		}
		all = append(all, p...)
		fmt.Fprintf(io.Err, "snuggen serve: app %s does not build; the runner lists it until it does:\n  %s\n", key, strings.Join(p, "\n  "))
	}
	if built == 0 && !watch {
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("serve: no app builds:\n  %s", strings.Join(all, "\n  "))}
	}
	return nil
}

// devLoopback reads --dev-loopback's values.
func devLoopback(vals []string) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	for _, v := range vals {
		aps, err := netgate.ParseDevLoopback(v)
		if err != nil {
			return nil, usageError("--dev-loopback: %v", err)
		}
		out = append(out, aps...)
	}
	return out, nil
}

func joinAddrs(aps []netip.AddrPort) string {
	s := make([]string, len(aps))
	for i, ap := range aps {
		s[i] = ap.String()
	}
	return strings.Join(s, ", ")
}

// newLogger is serve's log on w (stderr): log/slog records, one a line,
// as --log-format says (text, key=value; or json). slog's handlers write
// each record whole, under a lock of their own: the broker and the agent
// log from many goroutines.
func newLogger(w stdio.Writer, format string) (*slog.Logger, error) {
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, usageError("--log-format %q: use text or json", format)
}

// logfOf is a printf for the packages that log lines (replicated mode, the
// make loop): each line becomes a warning record with its component.
func logfOf(l *slog.Logger, component string) func(format string, args ...any) {
	return func(format string, args ...any) {
		l.Warn(strings.TrimRight(fmt.Sprintf(format, args...), "\n"), "component", component)
	}
}

// stderrLogOf returns a printf for the log lines of a verb without a
// structured log (mcp, whose stdout is the protocol): each goes to w whole,
// prefixed "snuggen <verb>:", one at a time.
func stderrLogOf(w stdio.Writer, verb string) func(format string, args ...any) {
	var mu sync.Mutex
	return func(format string, args ...any) {
		line := "snuggen " + verb + ": " + strings.TrimRight(fmt.Sprintf(format, args...), "\n") + "\n"
		mu.Lock()
		defer mu.Unlock()
		_, _ = stdio.WriteString(w, line)
	}
}

// backend is the agent: agentenv's choice ($SNUG_AGENT and each backend's
// variables), with --agent, --agent-url and --model in place of the
// variables they stand for.
func (o *serveOptions) backend() (agent.Backend, error) {
	name := o.agent
	if name != "" && !slices.Contains(agentenv.Names, name) && name != "mock" {
		return nil, usageError("--agent %q: use %s", name, strings.Join(agentenv.Names, ", "))
	}
	if name == "" {
		name = o.getenv(agentenv.Var)
	}
	if (o.agentURL != "" || o.model != "") && (name == "" || name == "offline" || name == "mock") {
		return nil, usageError("--agent-url and --model need --agent openai or --agent anthropic (or %s set to one)", agentenv.Var)
	}
	b, _, err := agentenv.FromEnvWith(o.getenv, agentenv.Overrides{Name: o.agent, BaseURL: o.agentURL, Model: o.model})
	if err != nil {
		return nil, usageError("agent: %v (or pass --agent, --agent-url, --model)", err)
	}
	return b, nil
}

// agentFlags registers the agent's flags of serve and mcp on c, with the
// completion of --agent's values.
func (o *serveOptions) agentFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.agent, "agent", "", "agent backend: offline (built in, no key), openai (any OpenAI-compatible server) or anthropic (default: $"+agentenv.Var+", else offline)")
	f.StringVar(&o.agentURL, "agent-url", "", "the agent's base URL (default: the backend's own, or its *_BASE_URL variable)")
	f.StringVar(&o.model, "model", "", "the agent's model (default: its *_MODEL variable)")
	_ = c.RegisterFlagCompletionFunc("agent", cobra.FixedCompletions(agentenv.Names, cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("model", cobra.NoFileCompletions)
	_ = c.RegisterFlagCompletionFunc("agent-url", cobra.NoFileCompletions)
}

// appArgs completes FILE|DIR arguments: HTML files and folders.
func appArgs(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"html", "htm"}, cobra.ShellCompDirectiveFilterFileExt
}

// findApps finds the command line's apps (discoverApps, the rules build
// uses too) and gives each a unique key.
func findApps(args []string) ([]*servedApp, error) {
	found, err := discoverApps("serve", args, "")
	if err != nil {
		return nil, err
	}
	var out []*servedApp
	seen := map[string]bool{}
	for _, f := range found {
		base := hostkit.KeyFromPath(f.path)
		key := base
		for n := 2; seen[key]; n++ {
			key = fmt.Sprintf("%s-%d", base, n)
		}
		seen[key] = true
		a := &servedApp{key: key, path: f.path}
		// Read as the packager reads a page: a FIFO or a link to /dev/zero
		// in a folder of apps must not hang or exhaust serve.
		if doc, err := pack.ReadPage(f.path); err == nil && isBuilt(doc) {
			a.built = true
		}
		out = append(out, a)
	}
	return out, nil
}

// isBuilt reports whether doc is snuggen build output for Snug hosts: it
// carries the runtime the build injects (whole or tree-shaken), byte for
// byte.
func isBuilt(doc []byte) bool {
	return runtimejs.TargetOf(doc) == "snug"
}

// metaFromBuilt reads a built app's snug:* meta tags for the runner's list.
func metaFromBuilt(doc []byte, key string) hostkit.Meta {
	return hostkit.MetaFromHTML(doc, key)
}

// watchApps rebuilds an app when a file its last build read changes (the
// one watcher, watchInputs) and reloads its frames.
func watchApps(ctx context.Context, io *IO, h *hostkit.Host, apps []*servedApp) {
	watchInputs(ctx, 300*time.Millisecond, func() [][]string {
		sets := make([][]string, len(apps))
		for i, a := range apps {
			sets[i] = a.watched()
		}
		return sets
	}, func(i int) {
		a := apps[i]
		start := time.Now()
		broken := h.Apps.Problems(a.key) != nil
		if err := h.Apps.Reload(ctx, a.key); err != nil {
			fmt.Fprintf(io.Err, "snuggen: rebuild %s failed (the last good build stays):\n%v\n", a.key, err)
			return
		}
		fmt.Fprintf(io.Out, "rebuilt %s in %s\n", a.key, time.Since(start).Round(time.Millisecond))
		if broken {
			// It builds now: the runner lists it, and here is its line.
			printAppLine(io, h, a.key)
		}
	})
}

// defaultDataDir is the per-user data directory: $XDG_DATA_HOME/snuggen or
// ~/.local/share/snuggen on Unix, the user config directory elsewhere.
func defaultDataDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "snuggen"), nil
	}
	if runtime.GOOS != "windows" && runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".local", "share", "snuggen"), nil
	}
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "snuggen"), nil
}

// parseSize reads a byte count: digits, optionally followed by B, KiB or MiB
// (KB and MB are taken as KiB and MiB).
func parseSize(s string) (int, error) {
	t := strings.TrimSpace(s)
	mult := 1
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"B", 1}} {
		if v, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(v), u.mult
			break
		}
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 || n > (1<<31-1)/mult {
		return 0, fmt.Errorf("size %q: not a byte count", s)
	}
	return n * mult, nil
}

// dataAndNet reads the --data and --config flags that serve and mcp share:
// the data directory (the user's default when data is empty) and the net
// gate's configuration (none when config is empty).
func dataAndNet(data, config string) (string, netgate.Config, error) {
	if data == "" {
		var err error
		if data, err = defaultDataDir(); err != nil {
			return "", netgate.Config{}, usageError("--data: %v; name a directory with --data", err)
		}
	}
	var cfg netgate.Config
	if config != "" {
		var err error
		if cfg, err = netgate.LoadConfig(config); err != nil {
			return "", netgate.Config{}, &ExitError{Code: exitUsage, Err: err}
		}
	}
	return data, cfg, nil
}
