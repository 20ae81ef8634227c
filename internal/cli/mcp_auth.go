package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// MinTokenBytes is the shortest bearer token --token-file takes.
const MinTokenBytes = 32

// mcpAuth is who snuggen mcp --http believes: bearer tokens (--token-file,
// MCP's authorization with this server as the protected resource) or the
// proxy's user header (--user-header, as for serve). Both nil: one user,
// for loopback only unless --insecure-no-auth.
func (o *mcpOptions) mcpAuth() (auth.TokenVerifier, func(*http.Request) (string, error), error) {
	if o.http == "" {
		if o.tokenFile != "" || o.userHeader != "" || o.insecureNoAuth || len(o.authServers) > 0 || o.publicURL != "" {
			return nil, nil, usageError("--token-file, --user-header, --authorization-server, --insecure-no-auth and --public-url go with --http: over stdio the one user is whoever runs the client")
		}
		return nil, nil, nil
	}
	if u, err := url.Parse(o.publicURL); o.publicURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return nil, nil, usageError("--public-url %q: want the http or https URL clients reach this server at, such as https://apps.example.com", o.publicURL)
	}
	if len(o.authServers) > 0 && o.tokenFile == "" {
		return nil, nil, usageError("--authorization-server goes with --token-file")
	}
	byHeader, err := o.userAuth()
	if err != nil {
		return nil, nil, err
	}
	if o.tokenFile == "" {
		return nil, byHeader, nil
	}
	if byHeader != nil {
		return nil, nil, usageError("use --token-file or --user-header, not both")
	}
	users, err := readTokenFile(o.tokenFile)
	if err != nil {
		return nil, nil, err
	}
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		user, ok := users[sha256.Sum256([]byte(tok))]
		if !ok {
			return nil, fmt.Errorf("unknown bearer token: %w", auth.ErrInvalidToken)
		}
		// A token of the file is good while it is in the file: each
		// request is checked afresh, so the expiry is a request's horizon.
		return &auth.TokenInfo{UserID: user, Expiration: time.Now().Add(time.Minute)}, nil
	}
	return verify, nil, nil
}

// readTokenFile reads --token-file: a line per token, "TOKEN USER" (blank
// lines and # comments skipped), each token at least MinTokenBytes long and
// used once; the file must not be readable by others. The tokens are kept
// as their SHA-256 only.
func readTokenFile(path string) (map[[32]byte]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, usageError("--token-file: %v", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, usageError("--token-file %s: mode %v lets others read it; chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError("--token-file: %v", err)
	}
	out := map[[32]byte]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, usageError("--token-file %s:%d: want TOKEN USER on a line (openssl rand -hex 32, then the user's name)", path, n)
		}
		if len(f[0]) < MinTokenBytes {
			return nil, usageError("--token-file %s:%d: a token of %d bytes; use at least %d (openssl rand -hex 32)", path, n, len(f[0]), MinTokenBytes)
		}
		k := sha256.Sum256([]byte(f[0]))
		if _, dup := out[k]; dup {
			return nil, usageError("--token-file %s:%d: this token is on an earlier line too; give each user a token of their own", path, n)
		}
		out[k] = f[1]
	}
	if len(out) == 0 {
		return nil, usageError("--token-file %s: no token in it; put TOKEN USER on a line", path)
	}
	return out, nil
}

// loopbackListener reports whether ln accepts connections from this machine
// only.
func loopbackListener(ln net.Listener) bool {
	a, ok := ln.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}
