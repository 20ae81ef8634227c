package cli

import (
	"context"
	"errors"
	"fmt"
	stdio "io"
	"io/fs"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/anthropic"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/agent/openai"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/hostkit/store"
	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

func init() { register(newServeCmd) }

type serveOptions struct {
	addr     string
	data     string
	agent    string
	agentURL string
	model    string
	config   string
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
	userHeader  string
	agentFor    agent.Backend // tests: the agent instead of --agent's
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

Keys come from the environment: OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL
for --agent openai, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL for
--agent anthropic. --config names the governed network's JSON file:
{"connections": [...], "deny": [...], "devHttpHosts": [...], "rate": {...}}
(the same file snuggen net check reads). Without it every new origin asks
you in the runner's dialog. Ctrl-C shuts down after every request in flight
got its terminal frame. What the apps are not told (a handler's panic with
its stack, the detail of an agent failure) is printed to stderr, each entry
prefixed "snuggen serve:".`,
		Example: `  snuggen serve examples/todo/app.html
  snuggen serve examples/ --addr 127.0.0.1:0 --watch
  OPENAI_API_KEY=… snuggen serve app.html --agent openai --model gpt-4o-mini
  snuggen serve app.html --agent openai --agent-url http://127.0.0.1:11434/v1 --model llama3.2
  snuggen serve app.html --config net.json --data ./data`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, io, o, args)
		},
	}
	f := c.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:7878", "address to listen on; port 0 picks a free port")
	f.StringVar(&o.data, "data", "", "directory for the apps' SQLite files and net grants (default: a per-user data directory)")
	f.StringVar(&o.agent, "agent", "offline", "agent backend: offline (built in, no key), openai (any OpenAI-compatible server) or anthropic")
	f.StringVar(&o.agentURL, "agent-url", "", "the agent's base URL (default: the backend's own, or its *_BASE_URL variable)")
	f.StringVar(&o.model, "model", "", "the agent's model (default: its *_MODEL variable)")
	f.StringVar(&o.config, "config", "", "JSON file of net connections and development allowances")
	f.BoolVar(&o.watch, "watch", false, "rebuild an app when its files change and reload its frames")
	f.StringVar(&o.maxReply, "agent-max-reply", "4MiB", "the most reply text read from the agent (B, KiB or MiB); a longer reply is cut and answered PARSE_FAILED")
	f.DurationVar(&o.dbLimit, "db-timeout", store.DefaultStatementTimeout, "the longest one SQL statement or import check of an app may run (DB_TIMEOUT past it)")
	f.StringVar(&o.postgres, "postgres", "", "replicated mode: PostgreSQL URL for leases and host state (with --object-store; see docs/scale.md)")
	f.StringVar(&o.objectStore, "object-store", "", "replicated mode: s3://bucket/prefix?endpoint=… where the app databases are replicated")
	f.StringVar(&o.clusterAddr, "cluster-addr", "127.0.0.1:0", "replicated mode: address of the listener other replicas forward requests to")
	f.StringVar(&o.advertise, "cluster-advertise", "", "replicated mode: URL other replicas reach --cluster-addr at (default http://<its address>)")
	f.DurationVar(&o.leaseTTL, "lease-ttl", 0, "replicated mode: how long a database lease lasts unrenewed (default 10s): the longest failover wait")
	f.StringVar(&o.userHeader, "user-header", "", "take the signed-in user from this request header at the page's WebSocket (set by the authenticating proxy in front; a connection without it is refused)")
	return c
}

// openCluster opens replicated mode; nil in a build without it (the
// cluster build tag adds it: the default build stays free of its
// dependencies and their start-up cost).
var openCluster func(ctx context.Context, o *serveOptions, dataDir string, logf func(string, ...any)) (hostkit.Cluster, error)

// clusterOptions turns --postgres and --object-store into the host's
// replicated mode, checked before anything is served.
func clusterOptions(ctx context.Context, o *serveOptions, dataDir string, logf func(string, ...any)) ([]hostkit.Option, error) {
	var opts []hostkit.Option
	if o.userHeader != "" {
		name := http.CanonicalHeaderKey(o.userHeader)
		opts = append(opts, hostkit.WithAuthenticate(func(r *http.Request) (string, error) {
			if u := r.Header.Get(name); u != "" {
				return u, nil
			}
			return "", fmt.Errorf("no %s header", name)
		}))
	}
	if o.postgres == "" && o.objectStore == "" {
		return opts, nil
	}
	if o.postgres == "" || o.objectStore == "" {
		return nil, usageError("replicated mode needs both --postgres and --object-store")
	}
	if openCluster == nil {
		return nil, usageError("this snuggen is built without replicated mode: build it with go build -tags cluster ./cmd/snuggen")
	}
	c, err := openCluster(ctx, o, dataDir, logf)
	if err != nil {
		return nil, &ExitError{Code: 1, Err: err}
	}
	return append(opts, hostkit.WithCluster(c)), nil
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
	path  string   // the HTML file
	watch []string // files and folders whose changes rebuild it
	built bool     // already built: served as is
}

func runServe(ctx context.Context, io *IO, o *serveOptions, args []string) error {
	found, err := findApps(args)
	if err != nil {
		return err
	}
	backend, err := o.backend()
	if err != nil {
		return err
	}
	maxReply := 0 // the default
	if o.maxReply != "" {
		if maxReply, err = parseSize(o.maxReply); err != nil || maxReply <= 0 {
			return usageError("--agent-max-reply %q: want a positive size such as 4MiB, 512KiB or 1000000", o.maxReply)
		}
	}
	if o.dbLimit < 0 {
		return usageError("--db-timeout %s: want a positive duration such as 5s", o.dbLimit)
	}
	if o.agentFor != nil {
		backend = o.agentFor
	}
	dataDir := o.data
	if dataDir == "" {
		if dataDir, err = defaultDataDir(); err != nil {
			return usageError("--data: %v; name a directory with --data", err)
		}
	}
	netCfg := netgate.Config{}
	if o.config != "" {
		if netCfg, err = netgate.LoadConfig(o.config); err != nil {
			return &ExitError{Code: 2, Err: err}
		}
	}
	var apps []hostkit.App
	for _, a := range found {
		if a.built {
			doc, err := pack.ReadPage(a.path)
			if err != nil {
				return &ExitError{Code: 2, Err: err}
			}
			apps = append(apps, hostkit.BuiltApp(a.key, doc, metaFromBuilt(doc, a.key)))
			continue
		}
		apps = append(apps, hostkit.FileApp(a.key, a.path))
	}
	logf := stderrLog(io.Err)
	extra, err := clusterOptions(ctx, o, dataDir, logf)
	if err != nil {
		return err
	}
	h, err := hostkit.New(append([]hostkit.Option{
		hostkit.Addr(o.addr),
		hostkit.WithApps(apps...),
		hostkit.WithAgent(backend),
		hostkit.WithDataDir(dataDir),
		hostkit.WithStoreOptions(store.Options{StatementTimeout: o.dbLimit}),
		hostkit.WithMaxReplyBytes(maxReply),
		hostkit.WithNet(netCfg),
		// What an app is not told goes to the person running serve: a
		// handler's panic with its stack, the detail of an agent failure.
		hostkit.WithBrokerOptions(func(bo *broker.Options) { bo.Logf = logf }),
		hostkit.WithAgentOptions(agent.Options{Log: func(instance string, err error) {
			logf("agent request of instance %s failed: %v", instance, err)
		}}),
	}, extra...)...)
	if err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	// The lines come before Serve, so a script that reads the first line
	// knows the server is listening when it gets it.
	for _, key := range h.Apps.Keys() {
		m, _ := h.Apps.Meta(key)
		id := m.AppID
		if id == "" {
			id = key
		}
		fmt.Fprintf(io.Out, "app %s %s\n", id, h.AppURL(key))
	}
	if r, ok := h.Cluster.(interface {
		ID() string
		InternalURL() string
	}); ok {
		fmt.Fprintf(io.Out, "replica %s %s\n", r.ID(), r.InternalURL())
	}
	if o.ready != nil {
		o.ready(h)
	}
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
			return &ExitError{Code: 1, Err: fmt.Errorf("serve: %w", err)}
		}
	}
	stopWatch()
	if watchDone != nil {
		<-watchDone
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Shutdown(sctx); err != nil {
		return &ExitError{Code: 1, Err: fmt.Errorf("serve: shutdown: %w", err)}
	}
	return nil
}

// stderrLog returns a printf for the host's log lines: each goes to w whole,
// prefixed "snuggen serve:", one at a time (the broker and the agent log
// from many goroutines).
func stderrLog(w stdio.Writer) func(format string, args ...any) {
	var mu sync.Mutex
	return func(format string, args ...any) {
		line := "snuggen serve: " + strings.TrimRight(fmt.Sprintf(format, args...), "\n") + "\n"
		mu.Lock()
		defer mu.Unlock()
		_, _ = stdio.WriteString(w, line)
	}
}

func (o *serveOptions) backend() (agent.Backend, error) {
	getenv := func(overrides map[string]string) func(string) string {
		return func(k string) string {
			if v, ok := overrides[k]; ok && v != "" {
				return v
			}
			return o.getenv(k)
		}
	}
	switch o.agent {
	case "offline", "mock":
		if o.agentURL != "" || o.model != "" {
			return nil, usageError("--agent-url and --model need --agent openai or --agent anthropic")
		}
		return offline.New(offline.Options{}), nil
	case "openai":
		b, err := openai.FromEnv(getenv(map[string]string{openai.EnvBaseURL: o.agentURL, openai.EnvModel: o.model}))
		if err != nil {
			return nil, usageError("--agent openai: %v (or pass --model)", err)
		}
		return b, nil
	case "anthropic":
		b, err := anthropic.FromEnv(getenv(map[string]string{anthropic.EnvBaseURL: o.agentURL, anthropic.EnvModel: o.model}))
		if err != nil {
			return nil, usageError("--agent anthropic: %v (or pass --model)", err)
		}
		return b, nil
	}
	return nil, usageError("--agent %q: use offline, openai or anthropic", o.agent)
}

// findApps turns the command line into apps with unique keys.
func findApps(args []string) ([]servedApp, error) {
	var out []servedApp
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil {
			return nil, usageError("%s: %v", arg, errors.Unwrap(err))
		}
		if !st.IsDir() {
			if !isHTML(arg) {
				return nil, usageError("%s: not an .html file; serve takes an app's HTML file or a folder of apps", arg)
			}
			out = append(out, fileApp(arg, folderApp(arg)))
			continue
		}
		// A folder that is itself one app.
		if p := appEntry(arg); p != "" {
			out = append(out, fileApp(p, true))
			continue
		}
		entries, err := os.ReadDir(arg)
		if err != nil {
			return nil, usageError("%s: %v", arg, err)
		}
		n := len(out)
		for _, e := range entries {
			p := filepath.Join(arg, e.Name())
			switch {
			case e.IsDir():
				if ep := appEntry(p); ep != "" {
					out = append(out, fileApp(ep, true))
				}
			case isHTML(p):
				out = append(out, fileApp(p, false))
			}
		}
		if len(out) == n {
			return nil, usageError("%s: no apps here (no *.html, no */app.html or */index.html)", arg)
		}
	}
	seen := map[string]bool{}
	for i := range out {
		key := out[i].key
		for n := 2; seen[key]; n++ {
			key = fmt.Sprintf("%s-%d", out[i].key, n)
		}
		out[i].key = key
		seen[key] = true
	}
	return out, nil
}

func isHTML(p string) bool {
	ext := strings.ToLower(filepath.Ext(p))
	return ext == ".html" || ext == ".htm"
}

// folderApp reports whether p is a folder's app.html or index.html, whose
// folder then belongs to the app.
func folderApp(p string) bool {
	b := strings.ToLower(filepath.Base(p))
	return b == "app.html" || b == "index.html"
}

func appEntry(dir string) string {
	for _, name := range []string{"app.html", "index.html"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

func fileApp(p string, ownsFolder bool) servedApp {
	a := servedApp{key: hostkit.KeyFromPath(p), path: p, watch: []string{p}}
	if ownsFolder {
		a.watch = []string{filepath.Dir(p)}
	}
	// Read as the packager reads a page: a FIFO or a link to /dev/zero
	// in a folder of apps must not hang or exhaust serve.
	if doc, err := pack.ReadPage(p); err == nil && isBuilt(doc) {
		a.built = true
	}
	return a
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

// watchApps polls the apps' files and rebuilds an app when one changed.
// Polling keeps snuggen free of a file-notification dependency; a change is
// seen within a poll interval.
func watchApps(ctx context.Context, io *IO, h *hostkit.Host, apps []servedApp) {
	const interval = 300 * time.Millisecond
	last := make([]string, len(apps))
	for i, a := range apps {
		last[i] = snapshot(a.watch)
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for i, a := range apps {
			s := snapshot(a.watch)
			if s == last[i] {
				continue
			}
			last[i] = s
			start := time.Now()
			if err := h.Apps.Reload(ctx, a.key); err != nil {
				fmt.Fprintf(io.Err, "snuggen: rebuild %s failed (the last good build stays):\n%v\n", a.key, err)
				continue
			}
			fmt.Fprintf(io.Out, "rebuilt %s in %s\n", a.key, time.Since(start).Round(time.Millisecond))
		}
	}
}

// snapshot summarizes the names, sizes and modification times of the files
// under paths (skipping node_modules and dot folders past the first 5000
// files, which no single app has).
func snapshot(paths []string) string {
	var lines []string
	for _, root := range paths {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && p != root && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if len(lines) > 5000 {
				return filepath.SkipAll
			}
			if info, err := d.Info(); err == nil && !d.IsDir() {
				lines = append(lines, fmt.Sprintf("%s %d %d", p, info.Size(), info.ModTime().UnixNano()))
			}
			return nil
		})
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
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
