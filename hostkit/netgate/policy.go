package netgate

import (
	"slices"
	"strings"
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
