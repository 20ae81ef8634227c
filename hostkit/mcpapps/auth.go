package mcpapps

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Who is calling, over streamable HTTP. An MCP server for many people must
// know which person each request comes from: MCP's authorization (the
// server is an OAuth 2.1 protected resource; a bearer token is checked on
// every request, Options.Tokens) or the host's own authenticator
// (Options.Authenticate). The user it names keys every database, grant,
// agent budget and audit entry by (user, app), through the broker session a
// view's handle opens (broker.OpenUserInstance), exactly as
// hostkit.WithAuthenticate does for the runner; a handle is bound to the
// user it was minted for. Without either the server has one user, and
// Handler answers loopback connections only (Options.InsecureNoAuth lifts
// that).
//
// Every request to an MCP endpoint is also held to the transport's Origin
// rule: a request with an Origin header that is not one of AllowOrigins is
// refused 403 (a page of another site, or a DNS-rebound name, never calls
// the endpoint; clients that are not browsers send no Origin).

// userHeader carries the authenticated user from the HTTP guard to the tool
// handlers (go-sdk hands them the request's header): its value is the
// server's random nonce, a space and the user, so a client's own copy,
// removed by the guard anyway, is never believed.
const userHeader = "Snug-Mcp-User"

// ProtectedResourcePath is where Handler serves the OAuth protected resource
// metadata (RFC 9728) of each endpoint: this path followed by the
// endpoint's (/.well-known/oauth-protected-resource/mcp/<key>).
const ProtectedResourcePath = "/.well-known/oauth-protected-resource"

// errNoUser is a tool call's refusal on a server with an authenticator when
// the call came in without an authenticated user (a transport other than
// Handler's).
var errNoUser = errors.New("this server serves signed-in users only: call it through its HTTP endpoint with your credentials")

func newNonce() (string, error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// authenticated reports whether the server knows its users.
func (s *Server) authenticated() bool {
	return s.opts.Tokens != nil || s.opts.Authenticate != nil
}

// userOf is the user a tool call authenticated as: ok is false when the
// server has an authenticator and the call carries no user it set.
func (s *Server) userOf(extra *mcp.RequestExtra) (user string, ok bool) {
	if !s.authenticated() {
		return "", true
	}
	if extra == nil || extra.Header == nil {
		return "", false
	}
	nonce, user, found := strings.Cut(extra.Header.Get(userHeader), " ")
	if !found || user == "" || subtle.ConstantTimeCompare([]byte(nonce), []byte(s.nonce)) != 1 {
		return "", false
	}
	return user, true
}

// guard wraps the MCP endpoint at path: the Origin rule, then who the user
// is (or, without an authenticator, the loopback rule).
func (s *Server) guard(path string, h http.Handler) http.Handler {
	setUser := func(r *http.Request, user string) { r.Header.Set(userHeader, s.nonce+" "+user) }
	var inner http.Handler
	switch {
	case s.opts.Tokens != nil:
		opts := &auth.RequireBearerTokenOptions{ResourceMetadataURL: s.metadataURL(path), Scopes: s.opts.TokenScopes}
		inner = auth.RequireBearerToken(s.opts.Tokens, opts)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ti := auth.TokenInfoFromContext(r.Context())
			if ti == nil || ti.UserID == "" {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+opts.ResourceMetadataURL+`"`)
				http.Error(w, "the token names no user", http.StatusUnauthorized)
				return
			}
			setUser(r, ti.UserID)
			h.ServeHTTP(w, r)
		}))
	case s.opts.Authenticate != nil:
		inner = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user, err := s.opts.Authenticate(r)
			if err != nil || user == "" {
				msg := "unauthorized"
				if err != nil {
					msg += ": " + err.Error()
				}
				http.Error(w, msg, http.StatusUnauthorized)
				return
			}
			setUser(r, user)
			h.ServeHTTP(w, r)
		})
	default:
		inner = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !s.opts.InsecureNoAuth && !loopbackConn(r) {
				http.Error(w, "forbidden: this MCP server has no authenticator and answers loopback connections only", http.StatusForbidden)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(userHeader)
		if o := r.Header.Get("Origin"); o != "" && !slices.Contains(s.opts.AllowOrigins, o) {
			http.Error(w, "forbidden: Origin "+o+" may not call this server (snuggen mcp --allow-origin)", http.StatusForbidden)
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// loopbackConn reports whether r came in on a loopback address of this
// machine.
func loopbackConn(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || a == nil {
		return false
	}
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// metadataURL is the address of endpoint path's protected resource metadata.
func (s *Server) metadataURL(path string) string {
	return strings.TrimRight(s.opts.GrantBase, "/") + ProtectedResourcePath + path
}

// resourceMetadata serves endpoint path's protected resource metadata: the
// resource (the endpoint's URL), the authorization servers that issue its
// tokens and the scopes it requires.
func (s *Server) resourceMetadata(path string) http.Handler {
	return auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               strings.TrimRight(s.opts.GrantBase, "/") + path,
		AuthorizationServers:   s.opts.AuthorizationServers,
		ScopesSupported:        s.opts.TokenScopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           s.opts.Name,
	})
}

// sessionHeader names the MCP session a streamable HTTP request belongs to.
const sessionHeader = "Mcp-Session-Id"
