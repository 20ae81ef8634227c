package netgate

import (
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/snuggen/snuggen/frame"
)

// failure is a refusal or error on its way to a net-response: a registry
// code, a message for the app (never a secret or a body) and, for the rate
// ceiling, when to retry.
type failure struct {
	code       string
	msg        string
	retryAfter time.Duration
}

func fail(code, msg string) *failure { return &failure{code: code, msg: msg} }

func (f *failure) Error() string { return f.code + ": " + f.msg }

// hostOwned are request headers the host sets itself; an app that sends one
// is refused rather than silently overridden. Accept-Encoding is not here: the
// host drops it (see the package doc) so the transport's transparent gunzip
// stays on and the scrub can read the body.
var hostOwned = []string{
	"host", "connection", "keep-alive", "proxy-connection", "transfer-encoding",
	"te", "trailer", "upgrade", "content-length", "expect",
}

// crossOriginSafe are the app headers that survive a cross-origin redirect
// hop; every other app header stays with the origin the app asked for.
var crossOriginSafe = []string{
	"accept", "accept-language", "content-language", "content-type", "user-agent",
}

func validHeaderName(n string) bool { return httpguts.ValidHeaderFieldName(n) }

func validHeaderValue(v string) bool { return httpguts.ValidHeaderFieldValue(v) }

// checkMethod accepts exactly the registry's methods.
func checkMethod(m string) *failure {
	if !slices.Contains(frame.NetMethods, m) {
		return invalid("method %q is not one of %s", m, strings.Join(frame.NetMethods, ", "))
	}
	return nil
}

// checkHeaders validates the app's headers: HTTP tokens, no CR/LF/NUL in a
// value, no credential-shaped header (STRIP_HEADERS), no header the host owns,
// names unique case-insensitively. It returns them in canonical form without
// Accept-Encoding.
func checkHeaders(h map[string]string) (map[string]string, *failure) {
	out := make(map[string]string, len(h))
	seen := make(map[string]bool, len(h))
	for name, value := range h {
		lower := strings.ToLower(name)
		switch {
		case !validHeaderName(name):
			return nil, invalid("header name %q is not an HTTP token", name)
		case !validHeaderValue(value):
			return nil, invalid("header %q has a value with CR, LF or another control character", name)
		case frame.IsStripHeader(lower):
			return nil, invalid("header %q is credential-shaped; credentials come only from the host's connections", name)
		case slices.Contains(hostOwned, lower) || strings.HasPrefix(lower, "proxy-"):
			return nil, invalid("header %q is set by the host, not the app", name)
		case seen[lower]:
			return nil, invalid("header %q appears twice (names are case-insensitive)", name)
		}
		seen[lower] = true
		if lower == "accept-encoding" {
			continue
		}
		out[name] = value
	}
	return out, nil
}

// isLocalName reports names that are loopback by definition (RFC 6761).
func isLocalName(host string) bool {
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// credentialedHeaders refuses, on a request that carries a connection's
// credential, the app headers that make a server answer another resource or
// method than the one the gate matched (override and rewrite headers), claim
// a client address or route (forwarding headers), or cut the answer into
// pieces the scrub sees one at a time (Range, If-Range).
func credentialedHeaders(conn *connection, hdr map[string]string) *failure {
	if conn == nil {
		return nil
	}
	for name := range hdr {
		if why := credentialRefused(strings.ToLower(name)); why != "" {
			return invalid("header %q is refused on a request that carries connection %q's credential: %s", name, conn.name, why)
		}
	}
	return nil
}

// Request headers refused on a credentialed request, with the reason the
// refusal gives. Exact names first, then prefixes. The map is built on
// first use, not in every snuggen process's start.
var (
	credentialRefusedNames = sync.OnceValue(func() map[string]string {
		return map[string]string{
			"range":    "a range request returns a piece of the answer, and pieces asked one by one pass the scrub",
			"if-range": "a range request returns a piece of the answer, and pieces asked one by one pass the scrub",
			// Rewrites: the server answers another path than the one the
			// credential was matched to.
			"x-original-url":          "it makes some servers route to another path than the URL's",
			"x-rewrite-url":           "it makes some servers route to another path than the URL's",
			"x-override-url":          "it makes some servers route to another path than the URL's",
			"x-original-uri":          "it makes some servers route to another path than the URL's",
			"x-envoy-original-path":   "it makes some servers route to another path than the URL's",
			"x-middleware-subrequest": "it makes some frameworks skip their own middleware (and its checks)",
			"x-http-method-override":  "it makes some servers run another method than the request's",
			"x-http-method":           "it makes some servers run another method than the request's",
			"x-method-override":       "it makes some servers run another method than the request's",
			"x-original-method":       "it makes some servers run another method than the request's",
			"forwarded":               "forwarding headers are the host's to set, not the app's",
			"x-real-ip":               "forwarding headers are the host's to set, not the app's",
			"x-client-ip":             "forwarding headers are the host's to set, not the app's",
			"client-ip":               "forwarding headers are the host's to set, not the app's",
			"true-client-ip":          "forwarding headers are the host's to set, not the app's",
			"x-cluster-client-ip":     "forwarding headers are the host's to set, not the app's",
			"x-originating-ip":        "forwarding headers are the host's to set, not the app's",
			"x-remote-ip":             "forwarding headers are the host's to set, not the app's",
			"x-remote-addr":           "forwarding headers are the host's to set, not the app's",
			"x-host":                  "forwarding headers are the host's to set, not the app's",
			"x-original-host":         "forwarding headers are the host's to set, not the app's",
			"x-proxyuser-ip":          "forwarding headers are the host's to set, not the app's",
			"cf-connecting-ip":        "forwarding headers are the host's to set, not the app's",
			"fastly-client-ip":        "forwarding headers are the host's to set, not the app's",
			"via":                     "forwarding headers are the host's to set, not the app's",
		}
	})
	credentialRefusedPrefixes = []string{"x-forwarded-", "x-envoy-"}
)

// credentialRefused says why a header (lower case) is refused on a
// credentialed request, or "" when it is not.
func credentialRefused(lower string) string {
	if why, ok := credentialRefusedNames()[lower]; ok {
		return why
	}
	for _, p := range credentialRefusedPrefixes {
		if strings.HasPrefix(lower, p) {
			return "forwarding and proxy-internal headers are the host's to set, not the app's"
		}
	}
	return ""
}
