package netgate

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/snuggen/snuggen/frame"
)

// App is the installed app a request comes from, as the host knows it: Key
// is the host's own key (R4: the frame's source), never the announced appId.
type App struct {
	// User is the signed-in user the request is for ("" for the one local
	// user): grants, reviews, the rate ceiling and audit entries are kept
	// per (User, Key).
	User string
	Key  string
	Name string // shown to the user when asking
	// Imported apps start unreviewed: NET_IMPORTED_UNAPPROVED until Review.
	Imported bool
	// Confirmer, when set, asks the user for this request instead of the
	// gate's own (a host with one dialog per page session sets it).
	Confirmer Confirmer
}

// Decision is the user's answer to a confirm dialog. The values are the
// relay's confirm-answer decisions.
type Decision string

// The answers a confirm dialog offers. Session is "allow until the page
// closes": the Confirmer keeps it (hostkit/relay: the page's connection)
// and answers Session again without asking; to the gate it is a Once.
const (
	Once    Decision = "once"
	Session Decision = "session"
	Always  Decision = "always"
	Deny    Decision = "deny"
)

// ConfirmRequest is what the host's dialog shows: the app's name, the method
// and the full URL (canonical, as it will be sent).
type ConfirmRequest struct {
	AppKey  string
	AppName string
	Method  string
	URL     string
	Origin  string
}

// Confirmer asks the user, in the host's own UI, whether an app may reach an
// origin. It blocks until the user answers or ctx ends.
type Confirmer interface {
	ConfirmNet(ctx context.Context, req ConfirmRequest) (Decision, error)
}

// ConfirmFunc adapts a function to Confirmer.
type ConfirmFunc func(ctx context.Context, req ConfirmRequest) (Decision, error)

// ConfirmNet calls f.
func (f ConfirmFunc) ConfirmNet(ctx context.Context, req ConfirmRequest) (Decision, error) {
	return f(ctx, req)
}

// Resolver looks names up; *net.Resolver satisfies it (network "ip").
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ConnectionEvent is a change to what an app may reach through a connection,
// the source of a connection-event hint: State is "connected" when a grant
// for the connection's origin is made and "revoked" when it goes.
type ConnectionEvent struct {
	User       string // the user whose grant changed ("" for the one local user)
	App        string
	Connection string
	State      string
}

// Connection event states (the connection-event hint's state field).
const (
	StateConnected = "connected"
	StateRevoked   = "revoked"
)

// Capabilities is what host-ready advertises for the net capability.
type Capabilities struct {
	Net  bool // the gate is wired
	Auth bool // at least one connection is configured
}

// Option configures a Gate.
type Option func(*options)

type options struct {
	resolver  Resolver
	confirmer Confirmer
	grants    string
	store     GrantStore
	sink      func(Entry)
	hook      func(ConnectionEvent)
	allowed   []netip.AddrPort
	dev       []netip.AddrPort // WithDevLoopback's services
	tls       *tls.Config
	timeout   time.Duration
	auditSize int
	now       func() time.Time
}

// WithResolver replaces the system resolver (tests; `net check --resolve`).
func WithResolver(r Resolver) Option { return func(o *options) { o.resolver = r } }

// WithConfirmer sets the default Confirmer. Without one (and without
// App.Confirmer) a request to an origin with no grant is NET_NOT_APPROVED.
func WithConfirmer(c Confirmer) Option { return func(o *options) { o.confirmer = c } }

// WithGrantsFile persists grants and reviews in path (a JSON file in the
// host's data directory). Without it grants last as long as the Gate.
func WithGrantsFile(path string) Option { return func(o *options) { o.grants = path } }

// WithGrantStore keeps grants and reviews in st instead of a file (a host
// of many replicas keeps them where every replica reads them).
func WithGrantStore(st GrantStore) Option { return func(o *options) { o.store = st } }

// WithAuditSink receives every audit entry as it is made.
func WithAuditSink(f func(Entry)) Option { return func(o *options) { o.sink = f } }

// WithAuditSize sets how many entries Audit keeps (default 1000).
func WithAuditSize(n int) Option { return func(o *options) { o.auditSize = n } }

// WithConnectionHook receives grant and revoke changes for connection-event
// hints.
func WithConnectionHook(f func(ConnectionEvent)) Option { return func(o *options) { o.hook = f } }

// WithTimeout replaces the 30 s overall limit of one request (tests).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithTLSConfig sets the TLS client config (tests trust httptest's cert with
// it). The gate keeps a minimum of TLS 1.2.
func WithTLSConfig(c *tls.Config) Option { return func(o *options) { o.tls = c } }

// WithAllowedAddrs exempts exact address:port pairs from the SSRF ceiling.
// It exists for tests that run real servers on loopback; a host never sets
// it. Every other port of the same address stays refused.
func WithAllowedAddrs(a ...netip.AddrPort) Option {
	return func(o *options) { o.allowed = append(o.allowed, a...) }
}

// Gate is the governed network. Its methods are safe for concurrent use.
type Gate struct {
	cfg       *compiled
	opts      options
	transport *http.Transport
	client    *http.Client
	dialer    *net.Dialer
	grants    GrantStore
	rate      *limiter
	audit     *auditLog
}

// New builds a Gate from cfg. It loads every connection's secret now, so a
// missing one is an error here rather than a failed request later.
func New(cfg Config, opts ...Option) (*Gate, error) {
	g := &Gate{}
	for _, o := range opts {
		o(&g.opts)
	}
	if g.opts.resolver == nil {
		g.opts.resolver = net.DefaultResolver
	}
	if g.opts.timeout <= 0 {
		g.opts.timeout = DefaultTimeout
	}
	if g.opts.now == nil {
		g.opts.now = time.Now
	}
	if err := checkDev(g.opts.dev); err != nil {
		return nil, err
	}
	c, err := cfg.compile(g.devTarget)
	if err != nil {
		return nil, err
	}
	g.cfg = c
	if g.opts.store != nil {
		g.grants = g.opts.store
	} else if g.grants, err = openGrants(g.opts.grants); err != nil {
		return nil, err
	}
	g.rate = newLimiter(c.perMinute, c.inFlight)
	g.audit = newAuditLog(g.opts.auditSize, g.opts.sink)
	g.dialer = &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: g.control}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if g.opts.tls != nil {
		tlsCfg = g.opts.tls.Clone()
		if tlsCfg.MinVersion < tls.VersionTLS12 {
			tlsCfg.MinVersion = tls.VersionTLS12
		}
	}
	g.transport = &http.Transport{
		Proxy:                  nil, // never a proxy from the environment
		DialContext:            g.dialContext,
		TLSClientConfig:        tlsCfg,
		TLSHandshakeTimeout:    10 * time.Second,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    16,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	g.client = &http.Client{
		Transport: g.transport,
		// Redirects are followed by the gate itself, hop by hop, so every
		// hop passes the ceiling again and no header leaks across origins.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return g, nil
}

// Close drops idle connections. Requests in flight end with their contexts.
func (g *Gate) Close() error {
	g.transport.CloseIdleConnections()
	return nil
}

// Capabilities reports what host-ready advertises: net is on, auth when at
// least one connection is configured.
func (g *Gate) Capabilities() Capabilities {
	return Capabilities{Net: true, Auth: len(g.cfg.conns) > 0}
}

// Connections names the configured connections (never their secrets).
func (g *Gate) Connections() []string {
	out := make([]string, len(g.cfg.conns))
	for i, c := range g.cfg.conns {
		out[i] = c.name
	}
	return out
}

// Audit returns the most recent audit entries, oldest first.
func (g *Gate) Audit() []Entry { return g.audit.entries() }

// Grants lists an app's grants (the one local user's; a store that cannot
// be read gives none). GrantsFor is a signed-in user's.
func (g *Gate) Grants(appKey string) []Grant { return g.GrantsFor("", appKey) }

// GrantsFor lists user's grants for an app (a product's settings page for
// that user); a store that cannot be read gives none.
func (g *Gate) GrantsFor(user, appKey string) []Grant {
	out, _ := g.grants.ListGrants(context.Background(), user, appKey)
	return out
}

// Grant records an "always" for (appKey, origin) as if the one local user
// had said so (a host's settings page). origin is any URL; its origin is
// kept. GrantFor is a signed-in user's.
func (g *Gate) Grant(appKey, rawOrigin string) error { return g.GrantFor("", appKey, rawOrigin) }

// GrantFor records user's "always" for (appKey, origin) and announces the
// connections on that origin to that user's instances.
func (g *Gate) GrantFor(user, appKey, rawOrigin string) error {
	t, f := parseTarget(rawOrigin)
	if f != nil {
		return fmt.Errorf("netgate: grant %q: %s", rawOrigin, f.msg)
	}
	added, err := g.grants.AddGrant(context.Background(), Grant{User: user, App: appKey, Origin: t.origin, Since: g.opts.now()})
	if err != nil {
		return err
	}
	if added {
		g.announce(user, appKey, t.origin, StateConnected)
	}
	return nil
}

// Revoke removes the one local user's grant for (appKey, origin) and
// announces the revocation of every connection on that origin. RevokeFor
// is a signed-in user's.
func (g *Gate) Revoke(appKey, rawOrigin string) error { return g.RevokeFor("", appKey, rawOrigin) }

// RevokeFor removes user's grant for (appKey, origin), announced to that
// user's instances only; other users' grants stay.
func (g *Gate) RevokeFor(user, appKey, rawOrigin string) error {
	t, f := parseTarget(rawOrigin)
	if f != nil {
		return fmt.Errorf("netgate: revoke %q: %s", rawOrigin, f.msg)
	}
	removed, err := g.grants.RemoveGrant(context.Background(), user, appKey, t.origin)
	if err != nil {
		return err
	}
	if removed {
		g.announce(user, appKey, t.origin, StateRevoked)
	}
	return nil
}

// Review marks an imported app as reviewed by the one local user: from now
// on its requests go through the confirm gate like any other app's.
// ReviewFor is a signed-in user's.
func (g *Gate) Review(appKey string) error { return g.ReviewFor("", appKey) }

// ReviewFor marks an imported app as reviewed by user.
func (g *Gate) ReviewFor(user, appKey string) error {
	return g.grants.MarkReviewed(context.Background(), user, appKey)
}

// Forget drops every grant and the review of an app (the one local
// user's); a host calls it when an app is removed or (re)installed by
// import, which starts with no grants. ForgetFor is a signed-in user's.
func (g *Gate) Forget(appKey string) error { return g.ForgetFor("", appKey) }

// ForgetFor drops user's grants and review of an app, announcing each
// revocation to that user's instances.
func (g *Gate) ForgetFor(user, appKey string) error {
	gone, err := g.grants.ForgetApp(context.Background(), user, appKey)
	for _, gr := range gone {
		g.announce(user, appKey, gr.Origin, StateRevoked)
	}
	return err
}

func (g *Gate) announce(user, app, origin, state string) {
	if g.opts.hook == nil {
		return
	}
	for _, c := range g.cfg.conns {
		if c.origin == origin {
			g.opts.hook(ConnectionEvent{User: user, App: app, Connection: c.name, State: state})
		}
	}
}

// reviewed reports whether app's user reviewed it; a store that cannot say
// counts as not reviewed.
func (g *Gate) reviewed(ctx context.Context, app App) bool {
	ok, err := g.grants.Reviewed(ctx, app.User, app.Key)
	return err == nil && ok
}

// CheckResult is the decision for one URL without sending anything.
type CheckResult struct {
	Allow bool `json:"allow"`
	// Address is the vetted address the request would be dialed to.
	Address string `json:"address,omitempty"`
	// URL is the canonical URL the request would be sent to.
	URL string `json:"url,omitempty"`
	// Connection names the connection whose credential would be injected.
	Connection string `json:"connection,omitempty"`
	Code       string `json:"code,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// Check runs the ceiling (URL, scheme, deny list, resolution and the SSRF
// tables) and the connection match for one request without sending it. With
// a non-empty app.Key it also applies the import review; it never asks the
// user and never uses the rate ceiling.
func (g *Gate) Check(ctx context.Context, app App, method, rawURL string) CheckResult {
	refuse := func(f *failure) CheckResult {
		return CheckResult{Code: f.code, Reason: f.msg}
	}
	if f := checkMethod(method); f != nil {
		return refuse(f)
	}
	t, f := parseTarget(rawURL)
	if f != nil {
		return refuse(f)
	}
	if f := g.ceiling(t); f != nil {
		return refuse(f)
	}
	addrs, f := g.vet(ctx, t.host, t.port)
	if f != nil {
		return refuse(f)
	}
	conn, f := g.match(t)
	if f != nil {
		return refuse(f)
	}
	if app.Key != "" && app.Imported && !g.reviewed(ctx, app) {
		return refuse(g.importedFailure(app))
	}
	res := CheckResult{Allow: true, URL: t.String(), Address: netip.AddrPortFrom(addrs[0].Unmap(), t.port).String()}
	if conn != nil {
		res.Connection = conn.name
	}
	return res
}

// ceiling is the part of the hard limits that needs no lookup: the scheme,
// the deny list by name and names that are loopback by definition.
func (g *Gate) ceiling(t *target) *failure {
	dev := g.devTarget(t)
	if t.scheme != "https" && !g.cfg.devHTTP[t.host] && !dev {
		return fail(frame.CodeNetSchemeBlocked, fmt.Sprintf("%s is plain http; only https is allowed (the operator lists development hosts in devHttpHosts)", t.origin))
	}
	if g.cfg.denyHosts[t.host] {
		return fail(frame.CodeNetHostBlocked, fmt.Sprintf("%s is on the operator's deny list", t.host))
	}
	for _, s := range g.cfg.denySufx {
		if strings.HasSuffix(t.host, s) {
			return fail(frame.CodeNetHostBlocked, fmt.Sprintf("%s is on the operator's deny list (*%s)", t.host, s))
		}
	}
	if !t.addr.IsValid() && isLocalName(t.host) && !dev {
		return fail(frame.CodeNetSSRFBlocked, fmt.Sprintf("%s is a loopback name", t.host))
	}
	return nil
}

// vetLiteral judges a numeric host, which needs no lookup, by the SSRF
// tables and the deny list; a name passes (vet judges it after consent).
func (g *Gate) vetLiteral(t *target) *failure {
	if !t.addr.IsValid() {
		return nil
	}
	_, f := g.vet(context.Background(), t.host, t.port)
	return f
}

// vet resolves host (an IP literal is never handed to a resolver) and
// refuses when any answer is in a blocked range or on the deny list; a name
// whose answers mix public and private addresses is refused. Fetch calls it
// for a name only after the user approved the origin.
func (g *Gate) vet(ctx context.Context, host string, port uint16) ([]netip.Addr, *failure) {
	if dev := g.devAddrs(host, port); dev != nil {
		return dev, nil // WithDevLoopback's service, by its address or localhost
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		ctx, cancel := context.WithTimeout(ctx, g.opts.timeout)
		defer cancel()
		got, err := g.opts.resolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctxFailure(ctx, g.opts.timeout)
			}
			return nil, fail(frame.CodeNetFetchFailed, fmt.Sprintf("DNS lookup of %s failed: %v", host, dnsReason(err)))
		}
		if len(got) == 0 {
			return nil, fail(frame.CodeNetFetchFailed, fmt.Sprintf("DNS lookup of %s returned no address", host))
		}
		addrs = got
	}
	for _, a := range addrs {
		if g.allowed(netip.AddrPortFrom(a, port)) {
			continue
		}
		if blocked, reason := Classify(a); blocked {
			if a.String() == host {
				return nil, fail(frame.CodeNetSSRFBlocked, reason)
			}
			return nil, fail(frame.CodeNetSSRFBlocked, fmt.Sprintf("%s resolves to a blocked address: %s", host, reason))
		}
	}
	for _, a := range addrs {
		for _, p := range g.cfg.denyNets {
			if p.Contains(a.Unmap()) {
				return nil, fail(frame.CodeNetHostBlocked, fmt.Sprintf("%s (%s) is on the operator's deny list (%s)", host, a, p))
			}
		}
	}
	return addrs, nil
}

func dnsReason(err error) string {
	var de *net.DNSError
	if errors.As(err, &de) {
		if de.IsNotFound {
			return "no such host"
		}
		if de.IsTimeout {
			return "timeout"
		}
		return de.Err
	}
	return err.Error()
}

func (g *Gate) allowed(ap netip.AddrPort) bool {
	ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	return slices.Contains(g.opts.allowed, ap)
}

// match finds the connection whose credential a request to t carries: none,
// exactly one, or NET_AMBIGUOUS_CONNECTION.
//
// On an origin with a path-scoped connection, a path servers may read
// differently (ambiguousPath) is NET_INVALID_REQUEST: the credential's scope
// holds only if the server routes the path the way the gate matched it.
func (g *Gate) match(t *target) (*connection, *failure) {
	var hit []*connection
	path := t.url.EscapedPath()
	for _, c := range g.cfg.conns {
		if c.origin != t.origin || c.path == "" || c.path == "/" {
			continue
		}
		if why := ambiguousPath(path); why != "" {
			return nil, invalid("the path %q holds %s; on %s, where connection %q is scoped to %s, servers may route it outside that scope, so the host refuses it (spell the path plainly)", path, why, t.origin, c.name, c.path)
		}
		break
	}
	for _, c := range g.cfg.conns {
		if c.origin != t.origin {
			continue
		}
		if c.path != "" && !pathHasPrefix(path, c.path) {
			continue
		}
		hit = append(hit, c)
	}
	switch len(hit) {
	case 0:
		return nil, nil
	case 1:
		return hit[0], nil
	}
	names := make([]string, len(hit))
	for i, c := range hit {
		names[i] = c.name
	}
	return nil, fail(frame.CodeNetAmbiguousConnection, fmt.Sprintf("%s matches %d connections (%s); the operator must narrow them", t.String(), len(hit), strings.Join(names, ", ")))
}

// pathHasPrefix matches a URL prefix at a segment boundary: "/v1" matches
// "/v1" and "/v1/x", not "/v10".
func pathHasPrefix(path, prefix string) bool {
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	return len(path) == len(prefix) || strings.HasSuffix(prefix, "/") || path[len(prefix)] == '/'
}

// StaticResolver answers names from a fixed table only, like curl's
// --resolve: `snuggen net check --resolve NAME=IP` and tests use it. A name
// not in the table is not found. Keys are canonical host names.
type StaticResolver map[string][]netip.Addr

// LookupNetIP returns the table's addresses for host.
func (r StaticResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if a, ok := r[host]; ok && len(a) > 0 {
		return slices.Clone(a), nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// ParseResolve reads one NAME=IP[,IP...] pair into r; NAME is canonicalized
// the way URL hosts are (lower case, IDN, one trailing dot dropped).
func (r StaticResolver) ParseResolve(pair string) error {
	name, ips, ok := strings.Cut(pair, "=")
	if !ok || name == "" || ips == "" {
		return fmt.Errorf("--resolve %q: want NAME=IP (IP may repeat: NAME=IP1,IP2)", pair)
	}
	host, addr, f := canonicalHost(name)
	if f != nil {
		return fmt.Errorf("--resolve %q: %s", pair, f.msg)
	}
	if addr.IsValid() {
		return fmt.Errorf("--resolve %q: %s is an address; addresses are never resolved", pair, name)
	}
	for _, s := range strings.Split(ips, ",") {
		a, err := netip.ParseAddr(strings.Trim(s, "[]"))
		if err != nil {
			return fmt.Errorf("--resolve %q: %q is not an IP address", pair, s)
		}
		r[host] = append(r[host], a)
	}
	return nil
}
