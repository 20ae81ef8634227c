// Package proxyauth believes a signed-in user named in a request header only
// when the request comes from the authenticating proxy in front of the
// host: it carries the proxy's shared secret, or its connection comes from
// a trusted proxy address, or both when both are configured. Anything else
// is refused, so a process that reaches the host's port directly cannot
// claim a user by sending the header itself.
//
// Its Authenticate is what hostkit.WithAuthenticate takes (snuggen serve
// --user-header); any server that keys data per user (snuggen mcp --http
// too) can use it the same way.
package proxyauth

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
)

// SecretHeader is the request header that carries the proxy's shared
// secret. The proxy sets it on every request it passes on, and strips any
// copy a client sent.
const SecretHeader = "X-Snug-Proxy-Secret"

// MinSecretBytes is the shortest secret Config accepts (openssl rand -hex 32
// makes 64 characters).
const MinSecretBytes = 32

// Config says how the proxy proves itself.
type Config struct {
	// UserHeader is the header the proxy names the user in (required).
	UserHeader string
	// Secrets are the values of SecretHeader believed: during a rotation
	// the current one and the previous one, at other times one. Each is
	// at least MinSecretBytes long.
	Secrets []string
	// Trusted are the proxy's addresses: a request whose connection comes
	// from elsewhere is refused. Note that a loopback prefix trusts every
	// process on the machine.
	Trusted []netip.Prefix
}

// Error is a refused request: why, for the host's log (never shown to the
// client, who gets a bare 401).
type Error struct{ Reason string }

func (e *Error) Error() string { return "proxyauth: " + e.Reason }

// New checks cfg and returns its Authenticate: the user a request names in
// cfg.UserHeader, or an *Error when the request does not come from the
// proxy or names no user. A Config with neither Secrets nor Trusted is an
// error: the header alone proves nothing.
func New(cfg Config) (func(r *http.Request) (string, error), error) {
	if cfg.UserHeader == "" {
		return nil, errors.New("proxyauth: no user header")
	}
	if len(cfg.Secrets) == 0 && len(cfg.Trusted) == 0 {
		return nil, fmt.Errorf("proxyauth: %s alone proves nothing: any client can send it; give the proxy's shared secret or its addresses", cfg.UserHeader)
	}
	for i, s := range cfg.Secrets {
		if len(s) < MinSecretBytes {
			return nil, fmt.Errorf("proxyauth: secret %d is %d bytes; use at least %d (openssl rand -hex 32)", i+1, len(s), MinSecretBytes)
		}
	}
	name := http.CanonicalHeaderKey(cfg.UserHeader)
	secrets := make([][]byte, len(cfg.Secrets))
	for i, s := range cfg.Secrets {
		secrets[i] = []byte(s)
	}
	trusted := append([]netip.Prefix(nil), cfg.Trusted...)
	return func(r *http.Request) (string, error) {
		if len(secrets) > 0 && !secretMatches(secrets, r.Header.Values(SecretHeader)) {
			return "", &Error{"no valid " + SecretHeader}
		}
		if len(trusted) > 0 && !fromTrusted(trusted, r.RemoteAddr) {
			return "", &Error{"connection from " + r.RemoteAddr + ", not a trusted proxy"}
		}
		users := r.Header.Values(name)
		if len(users) != 1 || users[0] == "" {
			return "", &Error{fmt.Sprintf("%d values of %s, want one", len(users), name)}
		}
		return users[0], nil
	}, nil
}

// secretMatches reports whether got is exactly one value equal to one of
// the secrets, compared in constant time.
func secretMatches(secrets [][]byte, got []string) bool {
	if len(got) != 1 {
		return false
	}
	ok := 0
	for _, s := range secrets {
		ok |= subtle.ConstantTimeCompare([]byte(got[0]), s)
	}
	return ok == 1
}

// fromTrusted reports whether remote (host:port, as net/http sets
// Request.RemoteAddr) is inside one of the prefixes.
func fromTrusted(prefixes []netip.Prefix, remote string) bool {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap()
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
