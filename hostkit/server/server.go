// Package server is hostkit's HTTP side: it serves the runner page (package
// site) and mounts the relay's WebSocket at /ws on the runner's own address,
// and serves each installed app's document from a site of its own,
// http://<label>.localhost:<port>/ (AppLabel), so the browser gives every
// app its own renderer process and a busy app cannot freeze the others. It
// adds the headers that make the browser hold the sandbox: on app documents
// the runner's CSP (frame.SandboxCSP and frame.HostCSP) plus "sandbox
// allow-scripts" and frame-ancestors limited to the runner, nosniff, no
// referrer and a Permissions-Policy that denies every powerful feature but
// clipboard-write (which the browser gives only on a user gesture); on
// the runner page Cross-Origin-Opener-Policy: same-origin and its own
// hash-only CSP.
//
// Every request is checked before it is routed: its Host must be exactly
// the runner's address or an installed app's host (a DNS-rebinding page
// gets 421 Misdirected Request), and its path must be one of the few the
// server answers, as sent (nothing is cleaned into a route, and nothing
// redirects).
//
// Its limit: it serves bytes and headers. It judges no frame (the broker
// does) and keeps no state beyond what it serves.
package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/site"
)

// AppDomain is the domain under which app documents are served: app key's
// document is http://<AppLabel(key)>.localhost:<port>/. Browsers resolve
// every name under localhost to the loopback address without asking DNS,
// and each such name is a site of its own (the public suffix list has no
// rule for localhost, so <label>.localhost is the registrable domain).
const AppDomain = "localhost"

// plainLabel is a key that is already a DNS label of its own.
var plainLabel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`) })

// AppLabel returns the DNS label app key's document is served under: the
// key itself when it is a lower-case DNS label that does not have "--" as
// its third and fourth characters, otherwise "k--" and 20 hex digits of the
// key's SHA-256 (a key with upper case, '.', '_' or over 63 characters).
// Distinct keys get distinct labels.
func AppLabel(key string) string {
	if plainLabel().MatchString(key) && !(len(key) >= 4 && key[2:4] == "--") {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "k--" + hex.EncodeToString(sum[:10])
}

// Catalog gives the server the installed apps.
type Catalog interface {
	// Apps lists the installed apps in the order the runner shows them.
	// The server fills each AppInfo's URL.
	Apps() []AppInfo
	// Document returns the HTML of the installed app key, ready to run
	// (built, or packaged on the fly from raw HTML). found is false for a
	// key that is not installed.
	Document(ctx context.Context, key string) (doc []byte, found bool, err error)
}

// AppInfo is one installed app as the runner's list shows it. App is the
// host's key (the storage namespace; AppLabel names its host); URL is the
// address of its document; the other fields are display metadata, from the
// app's build or its announce.
type AppInfo struct {
	App         string `json:"app"`
	URL         string `json:"url"`
	AppID       string `json:"appId,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
	IconEmoji   string `json:"iconEmoji,omitempty"`
	IconColor   string `json:"iconColor,omitempty"`
	// Problems say why the app's last build failed (file:line:col, why,
	// fix); Broken is set when there is no good build to run.
	Problems []string `json:"problems,omitempty"`
	Broken   bool     `json:"broken,omitempty"`
	// Made is an app the runner's make box made: the runner offers to
	// change it.
	Made bool `json:"made,omitempty"`
}

// Options configure a Server.
type Options struct {
	// Catalog lists the apps and serves their documents. Required.
	Catalog Catalog
	// Relay handles GET /ws (the relay's WebSocket). Required.
	Relay http.Handler
	// Origin is the runner's origin ("http://127.0.0.1:7878"): the only
	// Host the runner's routes answer for, the only ancestor allowed to
	// frame an app document, and the port of every app's host. Serve fills
	// it from the listener when it is empty.
	Origin string
	// Page is the runner page; nil builds the one in package site.
	Page *site.Page
	// Notices returns lines the runner shows above its apps while they
	// hold, such as a development exemption in effect; nil shows none.
	Notices func() []string
	// Probes answers GET /healthz and /readyz on the runner's address
	// (hostkit's liveness and readiness); nil serves neither.
	Probes http.Handler
}

// Server is the runner's HTTP server.
type Server struct {
	opts     Options
	page     *site.Page
	http     *http.Server
	mu       sync.Mutex
	origin   string
	fresh    map[net.Conn]struct{} // connections that have not sent a request yet
	prepared map[string]prepared   // by app key: the last document prepared
}

// prepared is a document PrepareDocument made, by the SHA-256 of its input:
// an app's build changes rarely and is served on every mount.
type prepared struct {
	sum  [sha256.Size]byte
	body []byte
}

// New returns a Server.
func New(opts Options) (*Server, error) {
	if opts.Catalog == nil {
		return nil, errors.New("server: Options.Catalog is required")
	}
	if opts.Relay == nil {
		return nil, errors.New("server: Options.Relay is required")
	}
	if opts.Origin != "" {
		if _, err := parseOrigin(opts.Origin); err != nil {
			return nil, err
		}
	}
	page := opts.Page
	if page == nil {
		p, err := site.Build()
		if err != nil {
			return nil, err
		}
		page = p
	}
	s := &Server{opts: opts, page: page, origin: opts.Origin}
	s.fresh = make(map[net.Conn]struct{})
	s.prepared = make(map[string]prepared)
	s.http = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ConnState:         s.connState,
	}
	return s, nil
}

func parseOrigin(origin string) (*url.URL, error) {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.Port() == "" || u.Path != "" || u.User != nil || u.RawQuery != "" {
		return nil, fmt.Errorf("server: Origin %q is not an origin like http://127.0.0.1:7878", origin)
	}
	return u, nil
}

// Handler returns the server's routes, for a host that runs its own
// http.Server. Set Options.Origin then.
func (s *Server) Handler() http.Handler { return s }

// Serve accepts connections on ln until Shutdown. It returns
// http.ErrServerClosed after a Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.origin == "" {
		s.origin = "http://" + ln.Addr().String()
	}
	s.mu.Unlock()
	return s.http.Serve(ln)
}

// Shutdown stops accepting connections and waits for plain HTTP requests to
// end. WebSocket connections are hijacked: the relay's owner closes them
// (hostkit.Host.Shutdown ends the broker's work first, so every in-flight
// request has its terminal frame on the wire before they close).
func (s *Server) Shutdown(ctx context.Context) error {
	// Browsers open spare connections ahead of need. net/http counts a
	// connection that never sent a request as busy for its first five
	// seconds, so Shutdown would wait for them: close them now, no request
	// is in flight on them.
	s.http.SetKeepAlivesEnabled(false)
	s.mu.Lock()
	for c := range s.fresh {
		c.Close()
	}
	s.mu.Unlock()
	if err := s.http.Shutdown(ctx); err != nil {
		return fmt.Errorf("server: shutdown: %w", err)
	}
	return nil
}

func (s *Server) connState(c net.Conn, st http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st == http.StateNew {
		s.fresh[c] = struct{}{}
	} else {
		delete(s.fresh, c)
	}
}

// Origin returns the runner's origin, or "" before Serve.
func (s *Server) Origin() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.origin
}

// AppURL returns the runner URL that opens the runner with app mounted.
func (s *Server) AppURL(app string) string {
	return s.Origin() + "/?app=" + url.QueryEscape(app)
}

// AppOrigin returns the origin app's document is served from,
// http://<AppLabel(app)>.localhost:<port>, or "" before Serve.
func (s *Server) AppOrigin(app string) string {
	u, err := url.Parse(s.Origin())
	if err != nil || u.Port() == "" {
		return ""
	}
	return "http://" + appHost(app, u.Port())
}

// AppDocumentURL returns the address of app's document (the URL the
// runner's frame loads), or "" before Serve.
func (s *Server) AppDocumentURL(app string) string {
	o := s.AppOrigin(app)
	if o == "" {
		return ""
	}
	return o + "/"
}

func appHost(app, port string) string {
	return AppLabel(app) + "." + AppDomain + ":" + port
}

// Apps lists the installed apps with the address of each one's document.
func (s *Server) Apps() []AppInfo {
	apps := s.opts.Catalog.Apps()
	if apps == nil {
		apps = []AppInfo{}
	}
	for i := range apps {
		apps[i].URL = s.AppDocumentURL(apps[i].App)
	}
	return apps
}

// ServeHTTP checks the request's Host and path, then answers it: the
// runner's routes on the runner's own address, an app's document on that
// app's host, 421 Misdirected Request for any other Host.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	origin := s.Origin()
	u, err := parseOrigin(origin)
	if err != nil {
		http.Error(w, "snug: the server has no origin yet", http.StatusServiceUnavailable)
		return
	}
	host := r.Host
	if r.URL.IsAbs() || r.URL.Opaque != "" {
		// An absolute-form request target names its own host: refuse it
		// rather than decide which of the two to believe.
		http.Error(w, "snug: absolute request targets are not served", http.StatusBadRequest)
		return
	}
	switch {
	case host == u.Host:
		s.serveRunnerRoute(w, r)
	default:
		if key, ok := s.appForHost(host, u.Port()); ok {
			s.serveAppRoute(w, r, key)
			return
		}
		// DNS rebinding: a page whose name now resolves to this address
		// sends its own name as Host. Nothing here is served under it.
		w.Header().Set("Cache-Control", "no-store")
		http.Error(w, fmt.Sprintf("snug: this server answers only as %s (and its apps' hosts); Host %q is not one of its names", u.Host, host), http.StatusMisdirectedRequest)
	}
}

// appForHost returns the installed app whose host is host.
func (s *Server) appForHost(host, port string) (string, bool) {
	name, ok := strings.CutSuffix(host, "."+AppDomain+":"+port)
	if !ok || name == "" || strings.Contains(name, ".") {
		return "", false
	}
	for _, a := range s.opts.Catalog.Apps() {
		if AppLabel(a.App) == name {
			return a.App, true
		}
	}
	return "", false
}

func methodOK(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "snug: method "+r.Method+" is not served", http.StatusMethodNotAllowed)
	return false
}

// notFound answers a path the server does not serve. Paths are matched as
// sent: "/./", "//x" or "/apps/..%2F" are no route, not a redirect.
func notFound(w http.ResponseWriter, r *http.Request) {
	http.Error(w, fmt.Sprintf("snug: no such path %q", r.URL.EscapedPath()), http.StatusNotFound)
}

func (s *Server) serveRunnerRoute(w http.ResponseWriter, r *http.Request) {
	if !methodOK(w, r) {
		return
	}
	if r.URL.RawPath != "" {
		notFound(w, r)
		return
	}
	switch r.URL.Path {
	case "/":
		s.serveRunner(w, r)
	case "/apps.json":
		s.serveAppList(w, r)
	case "/ws":
		s.opts.Relay.ServeHTTP(w, r)
	case "/favicon.ico":
		w.WriteHeader(http.StatusNoContent)
	case "/healthz", "/readyz":
		if s.opts.Probes == nil {
			notFound(w, r)
			return
		}
		s.opts.Probes.ServeHTTP(w, r)
	default:
		notFound(w, r)
	}
}

func (s *Server) serveAppRoute(w http.ResponseWriter, r *http.Request, key string) {
	if !methodOK(w, r) {
		return
	}
	// The document's own URL is the root, so a relative href such as "#x"
	// or "?q" resolves to it.
	if r.URL.Path != "/" || r.URL.RawPath != "" {
		notFound(w, r)
		return
	}
	s.serveApp(w, r, key)
}

func (s *Server) serveAppList(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	var notices []string
	if s.opts.Notices != nil {
		notices = s.opts.Notices()
	}
	_ = json.NewEncoder(w).Encode(struct {
		Apps    []AppInfo `json:"apps"`
		Notices []string  `json:"notices,omitempty"`
	}{s.Apps(), notices})
}

func (s *Server) serveRunner(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	u, _ := parseOrigin(s.Origin())
	// The page frames app documents only, each from its own host under
	// AppDomain on this port.
	h.Set("Content-Security-Policy", s.page.CSPWithFrames("http://*."+AppDomain+":"+u.Port()))
	// A window the runner opens, or one that opens the runner, gets no
	// handle on it.
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Permissions-Policy", runnerPolicy())
	_, _ = w.Write(s.page.HTML)
}

func (s *Server) serveApp(w http.ResponseWriter, r *http.Request, key string) {
	doc, found, err := s.opts.Catalog.Document(r.Context(), key)
	if err != nil {
		http.Error(w, fmt.Sprintf("app %s: %v", key, err), http.StatusInternalServerError)
		return
	}
	if !found {
		notFound(w, r)
		return
	}
	body, err := s.prepare(key, doc)
	if err != nil {
		http.Error(w, fmt.Sprintf("app %s: %v", key, err), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", AppCSP(s.Origin()))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Permissions-Policy", appPolicy())
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	_, _ = w.Write(body)
}

// prepare returns PrepareDocument(doc), reusing the last result for key
// when doc is the same.
func (s *Server) prepare(key string, doc []byte) ([]byte, error) {
	sum := sha256.Sum256(doc)
	s.mu.Lock()
	p, ok := s.prepared[key]
	s.mu.Unlock()
	if ok && p.sum == sum {
		return p.body, nil
	}
	body, err := PrepareDocument(doc)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.prepared[key] = prepared{sum: sum, body: body}
	s.mu.Unlock()
	return body, nil
}

// AppCSP is the Content-Security-Policy header of an app document: the
// runner's sandbox policy from the rules (frame.SandboxCSP), the directives
// only a host with the prelude adds (frame.HostCSP: Trusted Types, whose
// default policy the prelude makes), the sandbox itself (so the document is
// sandboxed even when opened outside the runner), and frame-ancestors
// limited to the runner's origin.
func AppCSP(runnerOrigin string) string {
	ancestors := "'none'"
	if runnerOrigin != "" {
		ancestors = runnerOrigin
	}
	return frame.CSPString(frame.SandboxCSP) +
		"; " + frame.CSPString(frame.HostCSP) +
		"; sandbox " + strings.Join(frame.SandboxTokens, " ") +
		"; frame-ancestors " + ancestors
}

// The Permissions-Policy headers, from the rules file's lists: every
// feature of PERMISSIONS_POLICY_DENIED is off ("=()") for the document and
// anything it embeds, and only features the browser knows are named (an
// unknown name costs a console error on every load and denies nothing).
// The features of PERMISSIONS_POLICY_DELEGATED (clipboard-write) the runner
// page may delegate to a frame that asks for them with its allow attribute
// ("=*": an app frame's opaque origin matches no narrower allowlist), and an
// app document keeps them for itself ("=(self)"); the browser still requires
// a user gesture for each use. docs/security.md gives the reasoning.
// (Built on first use: nothing is computed at process start.)
var (
	runnerPolicy = sync.OnceValue(func() string { return policyHeader("*") })
	appPolicy    = sync.OnceValue(func() string { return policyHeader("(self)") })
)

// policyHeader is the Permissions-Policy with the delegated features allowed
// to delegated.
func policyHeader(delegated string) string {
	var parts []string
	for _, f := range frame.PermissionsPolicyDenied {
		parts = append(parts, f+"=()")
	}
	for _, f := range frame.PermissionsPolicyDelegated {
		parts = append(parts, f+"="+delegated)
	}
	return strings.Join(parts, ", ")
}
