// Package hostkit is the thin public surface of the Go host kit: New wires
// the broker (sessions, R3), the agent bridge, per-app SQLite, the governed
// network, open-url, the relay WebSocket and the runner page into one Host
// that serves on a loopback address. Everything it wires is a package of its
// own (hostkit/broker, hostkit/agent, hostkit/store, hostkit/netgate,
// hostkit/openurl, hostkit/relay, hostkit/server, site); a host that needs
// something else builds from those directly, starting from this file.
//
// A minimal host:
//
//	h, err := hostkit.New(
//		hostkit.WithAddr("127.0.0.1:7878"),
//		hostkit.WithApps(hostkit.RawApp("hello", helloHTML)),
//		hostkit.WithDataDir(dir), // SQLite files and net grants
//	)
//	if err != nil { ... }
//	fmt.Println("open", h.AppURL("hello"))
//	go h.Serve()
//	...
//	h.Shutdown(ctx) // every request in flight gets its terminal frame first
//
// The agent is the offline agent unless WithAgent names another backend
// (hostkit/agent/openai, hostkit/agent/anthropic). Without WithDataDir the
// db capability is off; without WithNet the net capability is off.
//
// Its limit: New decides nothing about frames. The broker judges every frame;
// the runner page only relays.
package hostkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/events"
	"github.com/snuggen/snuggen/hostkit/metrics"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/hostkit/openurl"
	"github.com/snuggen/snuggen/hostkit/relay"
	"github.com/snuggen/snuggen/hostkit/savefile"
	"github.com/snuggen/snuggen/hostkit/server"
	"github.com/snuggen/snuggen/hostkit/store"
)

// DefaultAddr is where a host listens without Addr: loopback, a free port.
const DefaultAddr = "127.0.0.1:0"

// Option configures New.
type Option func(*config) error

type config struct {
	addr      string
	ln        net.Listener
	apps      []App
	backend   agent.Backend
	agentOpts agent.Options
	maxReply  int
	dataDir   string
	storeOpts store.Options
	net       *netgate.Config
	netOpts   []netgate.Option
	theme     string
	locale    string
	brokerFn  func(*broker.Options)
	auth      func(*http.Request) (string, error)
	cluster   Cluster
	broken    bool // WithBrokenApps
	make      *MakeOptions
	metrics   *metrics.Metrics // WithMetrics; New makes one otherwise
	opsAddr   string           // WithOpsAddr
}

// WithAddr sets the address to listen on (DefaultAddr when unset). Port 0
// picks a free port; Host.URL reports it.
func WithAddr(addr string) Option {
	return func(c *config) error { c.addr = addr; return nil }
}

// WithListener serves on ln instead of listening on WithAddr's address.
func WithListener(ln net.Listener) Option {
	return func(c *config) error { c.ln = ln; return nil }
}

// Addr is WithAddr.
//
// Deprecated: every option is named WithX; use WithAddr.
func Addr(addr string) Option { return WithAddr(addr) }

// Listener is WithListener.
//
// Deprecated: every option is named WithX; use WithListener.
func Listener(ln net.Listener) Option { return WithListener(ln) }

// WithApps installs apps (see RawApp, FileApp).
func WithApps(apps ...App) Option {
	return func(c *config) error { c.apps = append(c.apps, apps...); return nil }
}

// WithBrokenApps starts the host even when some apps fail to build: the
// others are served, and the runner lists each broken app with its
// diagnostics (file:line:col, why, fix; Host.Apps.Problems) until a Reload
// builds it (snuggen serve DIR, whose --watch reloads on every save).
// Without it New refuses to start while any app fails.
func WithBrokenApps() Option {
	return func(c *config) error { c.broken = true; return nil }
}

// WithAgent sets the agent backend (the offline agent when unset).
func WithAgent(b agent.Backend) Option {
	return func(c *config) error { c.backend = b; return nil }
}

// DefaultAgentTimeout bounds one agent request when WithAgentOptions sets
// no Timeout.
const DefaultAgentTimeout = 90 * time.Second

// WithAgentOptions sets the agent bridge's options: its system prompt,
// streaming of schema requests, timeout and the log that gets the detail of
// agent failures (the app sees only the code and a plain message).
func WithAgentOptions(o agent.Options) Option {
	return func(c *config) error { c.agentOpts = o; return nil }
}

// WithMaxReplyBytes bounds the reply text read from the agent (agent
// Options.MaxReplyBytes; agent.DefaultMaxReplyBytes, 4 MiB, when unset): the
// host stops reading a longer reply and answers the request PARSE_FAILED.
// It applies whatever WithAgentOptions says.
func WithMaxReplyBytes(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("hostkit: max reply bytes %d: must not be negative", n)
		}
		c.maxReply = n
		return nil
	}
}

// WithStoreOptions sets the app databases' policy: quota, statement time
// limit, engine memory, open databases (store.Options; its zero value is the
// defaults). It takes effect with WithDataDir.
func WithStoreOptions(o store.Options) Option {
	return func(c *config) error { c.storeOpts = o; return nil }
}

// WithDataDir keeps each app's SQLite database and the net grants under dir,
// and turns the db capability on.
func WithDataDir(dir string) Option {
	return func(c *config) error { c.dataDir = dir; return nil }
}

// WithNet turns the governed network on with cfg (connections, deny list,
// development allowances) and extra gate options. The runner page is the
// gate's Confirmer: the user answers in the host's own dialog.
func WithNet(cfg netgate.Config, opts ...netgate.Option) Option {
	return func(c *config) error { c.net = &cfg; c.netOpts = opts; return nil }
}

// WithTheme sets the theme host-ready carries until the user toggles it:
// frame.ModeLight (the default) or frame.ModeDark. New refuses any other
// value, naming it: the runtime would drop the host-ready carrying it, and
// no app would ever be ready.
func WithTheme(mode string) Option {
	return func(c *config) error {
		if err := optionCheck("WithTheme", mode, broker.Options{Theme: mode}); err != nil {
			return err
		}
		c.theme = mode
		return nil
	}
}

// WithLocale sets the locale host-ready carries (a BCP 47 tag such as
// "en-US"; none when unset). New refuses one host-ready cannot carry.
func WithLocale(tag string) Option {
	return func(c *config) error {
		if err := optionCheck("WithLocale", tag, broker.Options{Locale: tag}); err != nil {
			return err
		}
		c.locale = tag
		return nil
	}
}

// optionCheck holds one option's value to the broker's validation and
// names the option in its error.
func optionCheck(name, value string, o broker.Options) error {
	err := o.Validate()
	var oe *broker.OptionError
	if errors.As(err, &oe) {
		return fmt.Errorf("hostkit: %s(%q): %s; %s", name, value, oe.Problem, oe.Fix)
	}
	if err != nil {
		return fmt.Errorf("hostkit: %s(%q): %w", name, value, err)
	}
	return nil
}

// WithBrokerOptions lets a host adjust the broker's options (limits,
// timeouts) after New filled them in.
func WithBrokerOptions(f func(*broker.Options)) Option {
	return func(c *config) error { c.brokerFn = f; return nil }
}

// WithAuthenticate serves many users: f names the signed-in user of each
// page connection at the relay's WebSocket upgrade (from the embedding
// product's session cookie or header); an error or an empty user refuses
// the connection (401). Every storage namespace, grant, parse-failure budget
// and audit entry is then keyed by (user, installed app), so two users of one
// app never see each other's data, and a page gets only its own user's audit
// entries. Without it the host has one local user.
func WithAuthenticate(f func(r *http.Request) (user string, err error)) Option {
	return func(c *config) error { c.auth = f; return nil }
}

// Cluster is replicated mode: the state a host of many stateless replicas
// keeps outside the process. hostkit/cluster implements it over PostgreSQL
// (leases, grants, reviews, budgets, audit, installed apps) and object
// storage (each app database replicated by Litestream); see docs/scale.md.
// With WithCluster the host takes its app databases, grants and budgets
// from the Cluster, and WithDataDir's store and grants file (and the store
// options) are not used: the Cluster's own configuration has them.
type Cluster interface {
	// DB answers db-requests for (Call.User, Call.App): on this replica
	// when it owns that database, through its owner otherwise.
	DB() broker.DBHandler
	// Grants keeps the net grants and reviews.
	Grants() netgate.GrantStore
	// Budget keeps the parse-failure budgets.
	Budget() agent.Budget
	// Audit keeps one net audit entry.
	Audit(e netgate.Entry)
	// Connections carries connection events between replicas: deliver
	// runs on this replica for each event made on another one (until
	// Close), and the host calls the returned publish for each event made
	// here.
	Connections(deliver func(netgate.ConnectionEvent)) (publish func(netgate.ConnectionEvent))
	// Install records the installed apps (key to built document) in the
	// shared state when the host starts.
	Install(ctx context.Context, apps map[string][]byte) error
	// Close hands every database this replica owns to the next owner and
	// stops; the host calls it last in Shutdown.
	Close(ctx context.Context) error
}

// WithCluster switches the host to replicated mode over c (see Cluster);
// the Host closes c in Shutdown, or when New fails.
func WithCluster(c Cluster) Option {
	return func(cfg *config) error {
		if c == nil {
			return errors.New("hostkit: WithCluster(nil)")
		}
		cfg.cluster = c
		return nil
	}
}

// deliverConnection sends a connection event to the user's instances of
// the app on this host.
func (h *Host) deliverConnection(e netgate.ConnectionEvent) {
	if ev, err := events.Connection(e.Connection, e.State); err == nil && h.Broker != nil {
		h.Broker.SendToUserApp(e.User, e.App, ev)
	}
}

// connectionHook is the gate's: the event goes to this host's instances
// and, in replicated mode, to the other replicas (publishConnection, set in
// New before anything is served).
func (h *Host) connectionHook(e netgate.ConnectionEvent) {
	h.deliverConnection(e)
	if h.publishConnection != nil {
		h.publishConnection(e)
	}
}

// Host is a running Snug host: the listener, the HTTP server with the runner
// page, the relay and the broker with its capabilities. Its fields are the
// parts New wired, for a host that needs to reach one.
type Host struct {
	Apps   *Apps
	Broker *broker.Broker
	Relay  *relay.Relay
	Server *server.Server
	Store  *store.Store  // nil without WithDataDir
	Net    *netgate.Gate // nil without WithNet
	Agent  *agent.Bridge
	// Cluster is WithCluster's, nil on a single machine.
	Cluster Cluster
	// Metrics is what the host counts (WithMetrics's, or its own): the
	// broker's requests and errors, the agent's latency, the net gate's
	// decisions; OpsHandler serves it.
	Metrics *metrics.Metrics

	ln     net.Listener
	origin string
	// publishConnection hands this host's connection events to the other
	// replicas (replicated mode only).
	publishConnection func(netgate.ConnectionEvent)
	shutOnce          sync.Once
	shutErr           error

	// The operator's endpoints (WithOpsAddr): nil without.
	opsLn   net.Listener
	opsSrv  *http.Server
	opsOnce sync.Once
	opsDone chan struct{}
}

// New listens and wires a Host. It does not serve yet: call Serve.
func New(opts ...Option) (*Host, error) {
	c := &config{addr: DefaultAddr}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	h, err := newHost(c)
	if err != nil && c.cluster != nil {
		err = errors.Join(err, c.cluster.Close(context.Background()))
	}
	return h, err
}

func newHost(c *config) (*Host, error) {
	apps, err := newApps(c.apps)
	if err != nil {
		return nil, err
	}
	if c.dataDir != "" && c.cluster == nil {
		if err := apps.addMade(c.dataDir); err != nil {
			return nil, err
		}
	}
	// Build every app now: the runner's list shows their names and icons,
	// and a broken app is reported before the host serves anything.
	if errs := apps.BuildAll(context.Background()); len(errs) > 0 && !c.broken {
		return nil, errors.Join(errs...)
	}
	if c.cluster != nil {
		docs := map[string][]byte{}
		for _, k := range apps.Keys() {
			if doc, ok, err := apps.Document(context.Background(), k); err == nil && ok {
				docs[k] = doc
			}
		}
		if err := c.cluster.Install(context.Background(), docs); err != nil {
			return nil, fmt.Errorf("hostkit: %w", err)
		}
	}
	ln := c.ln
	if ln == nil {
		ln, err = net.Listen("tcp", c.addr)
		if err != nil {
			return nil, fmt.Errorf("hostkit: listen on %s: %w", c.addr, err)
		}
	}
	h := &Host{Apps: apps, ln: ln, origin: "http://" + ln.Addr().String(), Metrics: c.metrics}
	if h.Metrics == nil {
		h.Metrics = metrics.New()
	}
	err = h.wire(c)
	if err == nil {
		err = h.listenOps(c.opsAddr)
	}
	if err != nil {
		ln.Close()
		h.Cluster = nil // New closes it
		h.closeParts()
		return nil, err
	}
	return h, nil
}

// wire makes the host's parts from c and connects them: the agent bridge,
// the store, the net gate, the broker, then the relay and the server.
func (h *Host) wire(c *config) error {
	// The runner page's dialogs: the relay finds the page that owns the
	// asking iframe through the request's context.
	ask := relay.Dialogs{}
	backend := c.backend
	if backend == nil {
		backend = offline.New(offline.Options{})
	}
	if c.cluster != nil {
		h.Cluster = c.cluster
	}
	ao := agentOptions(c)
	if ao.Observe == nil {
		m := h.Metrics
		ao.Observe = func(d time.Duration, e *frame.Error) { m.AgentDone(d, e != nil) }
	}
	h.Agent = agent.NewBridge(backend, ao)
	bo := broker.Options{
		Agent:    broker.Agent(h.Agent),
		OpenURL:  broker.OpenURL(openurl.New(ask, openurl.Options{})),
		SaveFile: broker.SaveFile(savefile.New(ask, savefile.Options{})),
		Theme:    c.theme,
		Locale:   c.locale,
		Metrics:  h.Metrics,
		// An announce is the instance's claim about itself: the relay shows
		// it on that instance's header only. The app list and the names in
		// dialogs stay the installed app's own metadata.
	}
	if c.cluster != nil {
		bo.DB = c.cluster.DB()
	} else if c.dataDir != "" {
		st, err := store.Open(filepath.Join(c.dataDir, "db"), c.storeOpts)
		if err != nil {
			return fmt.Errorf("hostkit: %w", err)
		}
		h.Store = st
		bo.DB = broker.Store(st)
	}
	if c.net != nil {
		if err := h.wireNet(c, ask, &bo); err != nil {
			return err
		}
	}
	if c.brokerFn != nil {
		c.brokerFn(&bo)
	}
	b, err := broker.NewChecked(bo)
	if err != nil {
		return fmt.Errorf("hostkit: %w", err)
	}
	h.Broker = b
	if c.cluster != nil && h.Net != nil {
		// From here the other replicas' events reach this broker.
		h.publishConnection = c.cluster.Connections(h.deliverConnection)
	}
	return h.wireRelay(c, backend)
}

// agentOptions is the agent bridge's options: c's, with the default
// timeout, the reply limit, and in replicated mode the cluster's budget.
func agentOptions(c *config) agent.Options {
	ao := c.agentOpts
	if ao.Timeout == 0 {
		// Below the broker's own per-request limit, so a hung agent is
		// answered NETWORK_ERROR (retryable) rather than a bare timeout.
		ao.Timeout = DefaultAgentTimeout
	}
	if c.maxReply > 0 {
		ao.MaxReplyBytes = c.maxReply
	}
	if c.cluster != nil && ao.Budget == nil {
		ao.Budget = c.cluster.Budget()
	}
	return ao
}

// wireNet opens the net gate (its confirm dialogs through ask, its audit
// to the user's pages and the cluster, its grants in the data directory or
// the cluster) and gives it to the broker's options.
func (h *Host) wireNet(c *config, ask relay.Dialogs, bo *broker.Options) error {
	nopts := append([]netgate.Option{
		netgate.WithConfirmer(ask),
		netgate.WithAuditSink(func(e netgate.Entry) {
			h.Metrics.NetDecision(e.Decision, e.Code)
			if h.Relay != nil {
				h.Relay.AuditUser(e.User, e) // that user's pages only
			}
			if h.Cluster != nil {
				h.Cluster.Audit(e)
			}
		}),
		// A grant or revocation rings the app's doorbell (R7): the
		// event names the connection and its state, nothing more, and
		// goes to the instances of the user whose grant it is (on
		// every replica, in replicated mode).
		netgate.WithConnectionHook(h.connectionHook),
	}, c.netOpts...)
	if c.cluster != nil {
		nopts = append(nopts, netgate.WithGrantStore(c.cluster.Grants()))
	} else if c.dataDir != "" {
		nopts = append(nopts, netgate.WithGrantsFile(filepath.Join(c.dataDir, "grants.json")))
	}
	g, err := netgate.New(*c.net, nopts...)
	if err != nil {
		return fmt.Errorf("hostkit: %w", err)
	}
	h.Net = g
	bo.Net = broker.Netgate(g, func(key string) netgate.App {
		// The dialog names the app by the host's own key too: the
		// display name comes from the app's own file.
		m, _ := h.Apps.Meta(key)
		name := key
		if m.DisplayName != "" && m.DisplayName != key {
			name = m.DisplayName + " (" + key + ")"
		}
		return netgate.App{Key: key, Name: name}
	})
	return nil
}

// wireRelay makes the relay on the broker (with the make boxes when c
// turns them on) and the server in front of it, and has a change of the
// apps reach the pages.
func (h *Host) wireRelay(c *config, backend agent.Backend) error {
	var mk relay.Maker
	if c.make != nil {
		mk = newHostMaker(h, c, backend)
	}
	rl, err := relay.New(h.Broker, relay.Options{
		Maker:     mk,
		Origin:    h.origin,
		Host:      h.ln.Addr().String(),
		Installed: h.Apps.installed,
		// The user enters here: every session of a page connection is
		// opened for the user its upgrade named.
		Authenticate: c.auth,
	})
	if err != nil {
		return fmt.Errorf("hostkit: %w", err)
	}
	h.Relay = rl
	h.Apps.onChange = func(reload string) {
		if reload != "" {
			_ = rl.Broadcast(map[string]string{"t": "reload", "app": reload})
		}
		h.broadcastApps()
	}
	srv, err := server.New(server.Options{Catalog: h.Apps, Relay: rl, Origin: h.origin, Notices: h.notices, Probes: h.probes()})
	if err != nil {
		return fmt.Errorf("hostkit: %w", err)
	}
	h.Server = srv
	return nil
}

// notices are the runner's lines about exemptions in effect: the
// development services on loopback the net gate lets apps reach.
func (h *Host) notices() []string {
	if h.Net == nil {
		return nil
	}
	dev := h.Net.DevLoopback()
	if len(dev) == 0 {
		return nil
	}
	names := make([]string, len(dev))
	for i, ap := range dev {
		names[i] = ap.String()
	}
	return []string{"Development: apps may reach " + strings.Join(names, ", ") +
		" on this machine (over http too, or as localhost). Nothing else on loopback is reachable."}
}

func (h *Host) broadcastApps() {
	if h.Relay == nil || h.Server == nil {
		return
	}
	_ = h.Relay.Broadcast(struct {
		T    string           `json:"t"`
		Apps []server.AppInfo `json:"apps"`
	}{"apps", h.Server.Apps()})
}

// URL is the runner page's address, such as http://127.0.0.1:7878/.
func (h *Host) URL() string { return h.origin + "/" }

// Origin is the runner's origin, such as http://127.0.0.1:7878.
func (h *Host) Origin() string { return h.origin }

// AppURL is the runner's address with app mounted: the URL to open.
func (h *Host) AppURL(app string) string { return h.Server.AppURL(app) }

// AppDocumentURL is the address of app's document, the URL the runner's
// frame loads: http://<label>.localhost:<port>/, a site of the app's own
// (server.AppLabel), so the browser runs each app in its own process.
func (h *Host) AppDocumentURL(app string) string { return h.Server.AppDocumentURL(app) }

// Serve serves until Shutdown; it returns nil after a Shutdown.
func (h *Host) Serve() error {
	h.serveOps()
	err := h.Server.Serve(h.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown ends the host in the order R3 needs: the broker first sends
// every request in flight its terminal frame, the relay writes what it
// queued and closes the page connections, then the HTTP server stops and
// the store and the gate close. It is safe to call more than once.
func (h *Host) Shutdown(ctx context.Context) error {
	h.shutOnce.Do(func() {
		var errs []error
		if err := h.Broker.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
		if err := h.Relay.Close(ctx); err != nil {
			errs = append(errs, err)
		}
		if err := h.Server.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
		_ = h.ln.Close() // Serve closes it too; this covers a host never served
		errs = append(errs, h.closeParts())
		if err := h.closeOps(ctx); err != nil {
			errs = append(errs, err)
		}
		h.shutErr = errors.Join(errs...)
	})
	return h.shutErr
}

func (h *Host) closeParts() error {
	var errs []error
	if h.Net != nil {
		errs = append(errs, h.Net.Close())
	}
	if h.Store != nil {
		errs = append(errs, h.Store.Close())
	}
	if h.Cluster != nil {
		// Last: the databases this replica owns go to the next owner once
		// nothing here can write to them.
		errs = append(errs, h.Cluster.Close(context.Background()))
	}
	return errors.Join(errs...)
}
