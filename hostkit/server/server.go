// Package server is hostkit's HTTP side: it serves the runner page (package
// site), each installed app's document under /apps/<key>/, and mounts the
// relay's WebSocket at /ws. It adds the headers that make the browser hold
// the sandbox: on app documents the runner's CSP (frame.SandboxCSP) plus
// "sandbox allow-scripts" and frame-ancestors limited to the runner,
// nosniff, no referrer and a Permissions-Policy that denies every powerful
// feature; on the runner page Cross-Origin-Opener-Policy: same-origin and
// its own hash-only CSP.
//
// Its limit: it serves bytes and headers. It judges no frame (the broker
// does) and keeps no state beyond what it serves.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/site"
)

// AppsPath is the path prefix of app documents: /apps/<key>/.
const AppsPath = "/apps/"

// Catalog gives the server the installed apps.
type Catalog interface {
	// Apps lists the installed apps in the order the runner shows them.
	Apps() []AppInfo
	// Document returns the HTML of the installed app key, ready to run
	// (built, or packaged on the fly from raw HTML). found is false for a
	// key that is not installed.
	Document(ctx context.Context, key string) (doc []byte, found bool, err error)
}

// AppInfo is one installed app as the runner's list shows it. App is the
// host's key (the URL path segment and the storage namespace); the other
// fields are display metadata, from the app's build or its announce.
type AppInfo struct {
	App         string `json:"app"`
	URL         string `json:"url"`
	AppID       string `json:"appId,omitempty"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
	IconEmoji   string `json:"iconEmoji,omitempty"`
	IconColor   string `json:"iconColor,omitempty"`
}

// AppPath returns the path of app's document.
func AppPath(app string) string { return AppsPath + url.PathEscape(app) + "/" }

// Options configure a Server.
type Options struct {
	// Catalog lists the apps and serves their documents. Required.
	Catalog Catalog
	// Relay handles GET /ws (the relay's WebSocket). Required.
	Relay http.Handler
	// Origin is the runner's origin ("http://127.0.0.1:7878"), the only
	// ancestor allowed to frame an app document. Serve fills it from the
	// listener when it is empty.
	Origin string
	// Page is the runner page; nil builds the one in package site.
	Page *site.Page
}

// Server is the runner's HTTP server.
type Server struct {
	opts   Options
	page   *site.Page
	mux    *http.ServeMux
	http   *http.Server
	mu     sync.Mutex
	origin string
	fresh  map[net.Conn]struct{} // connections that have not sent a request yet
}

// New returns a Server.
func New(opts Options) (*Server, error) {
	if opts.Catalog == nil {
		return nil, errors.New("server: Options.Catalog is required")
	}
	if opts.Relay == nil {
		return nil, errors.New("server: Options.Relay is required")
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
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.serveRunner)
	mux.HandleFunc("GET "+AppsPath+"{app}/{$}", s.serveApp)
	mux.HandleFunc("GET "+AppsPath+"{app}", func(w http.ResponseWriter, r *http.Request) {
		// The document's own URL ends in a slash, so a relative href such as
		// "#x" or "?q" resolves inside the app's path.
		http.Redirect(w, r, AppsPath+r.PathValue("app")+"/", http.StatusMovedPermanently)
	})
	mux.HandleFunc("GET /apps.json", s.serveAppList)
	mux.Handle("GET /ws", opts.Relay)
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	s.mux = mux
	s.fresh = make(map[net.Conn]struct{})
	s.http = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ConnState:         s.connState,
	}
	return s, nil
}

// Handler returns the server's routes, for a host that runs its own
// http.Server. Set Options.Origin then.
func (s *Server) Handler() http.Handler { return s.mux }

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

func (s *Server) serveAppList(w http.ResponseWriter, r *http.Request) {
	apps := s.opts.Catalog.Apps()
	if apps == nil {
		apps = []AppInfo{}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	_ = json.NewEncoder(w).Encode(struct {
		Apps []AppInfo `json:"apps"`
	}{apps})
}

func (s *Server) serveRunner(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", s.page.CSP)
	// A window the runner opens, or one that opens the runner, gets no
	// handle on it.
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Permissions-Policy", permissionsPolicy)
	_, _ = w.Write(s.page.HTML)
}

func (s *Server) serveApp(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("app")
	doc, found, err := s.opts.Catalog.Document(r.Context(), key)
	if err != nil {
		http.Error(w, fmt.Sprintf("app %s: %v", key, err), http.StatusInternalServerError)
		return
	}
	if !found {
		http.NotFound(w, r)
		return
	}
	body, err := PrepareDocument(doc)
	if err != nil {
		http.Error(w, fmt.Sprintf("app %s: %v", key, err), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", AppCSP(s.Origin()))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Permissions-Policy", permissionsPolicy)
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	_, _ = w.Write(body)
}

// AppCSP is the Content-Security-Policy header of an app document: the
// runner's sandbox policy from the rules (frame.SandboxCSP), the sandbox
// itself (so the document is sandboxed even when opened outside the
// runner), and frame-ancestors limited to the runner's origin.
func AppCSP(runnerOrigin string) string {
	ancestors := "'none'"
	if runnerOrigin != "" {
		ancestors = runnerOrigin
	}
	return frame.CSPString(frame.SandboxCSP) +
		"; sandbox " + strings.Join(frame.SandboxTokens, " ") +
		"; frame-ancestors " + ancestors
}

// permissionsPolicy denies every powerful feature to the document and to
// anything it could embed. Browsers ignore the names they do not know.
var permissionsPolicy = strings.Join([]string{
	"accelerometer=()", "ambient-light-sensor=()", "autoplay=()", "battery=()",
	"bluetooth=()", "browsing-topics=()", "camera=()", "clipboard-read=()",
	"clipboard-write=()", "display-capture=()", "document-domain=()",
	"encrypted-media=()", "fullscreen=()", "gamepad=()", "geolocation=()",
	"gyroscope=()", "hid=()", "identity-credentials-get=()", "idle-detection=()",
	"interest-cohort=()", "local-fonts=()", "magnetometer=()", "microphone=()",
	"midi=()", "otp-credentials=()", "payment=()", "picture-in-picture=()",
	"publickey-credentials-create=()", "publickey-credentials-get=()",
	"screen-wake-lock=()", "serial=()", "speaker-selection=()",
	"storage-access=()", "usb=()", "web-share=()", "window-management=()",
	"xr-spatial-tracking=()",
}, ", ")
