package cli

import (
	"bufio"
	"bytes"
	"net/http"
	"net/netip"
	"os"
	"strings"

	"github.com/snuggen/snuggen/hostkit/proxyauth"
)

// userAuth is --user-header's authenticator: the header is believed only
// from the proxy (--proxy-secret-file, --trusted-proxy); nil without
// --user-header.
func (o *serveOptions) userAuth() (func(*http.Request) (string, error), error) {
	if o.userHeader == "" {
		if o.proxySecretFile != "" || len(o.trustedProxies) > 0 {
			return nil, usageError("--proxy-secret-file and --trusted-proxy go with --user-header")
		}
		return nil, nil
	}
	cfg := proxyauth.Config{UserHeader: o.userHeader}
	if o.proxySecretFile != "" {
		s, err := readSecretFile("--proxy-secret-file", o.proxySecretFile)
		if err != nil {
			return nil, err
		}
		cfg.Secrets = s
	}
	for _, p := range o.trustedProxies {
		pfx, err := parsePrefix(p)
		if err != nil {
			return nil, usageError("--trusted-proxy %q: want an address or a prefix such as 10.0.0.7 or 10.0.0.0/24", p)
		}
		cfg.Trusted = append(cfg.Trusted, pfx)
	}
	if len(cfg.Secrets) == 0 && len(cfg.Trusted) == 0 {
		return nil, usageError("--user-header %s alone would believe any client that sends it: add --proxy-secret-file (the proxy sends the secret in %s) or --trusted-proxy (the proxy's addresses)", o.userHeader, proxyauth.SecretHeader)
	}
	return proxyauth.New(cfg)
}

// parsePrefix reads an address (one host) or a prefix.
func parsePrefix(s string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	return p.Masked(), err
}

// readSecretFile reads a file of secrets, one a line (blank lines and #
// comments skipped): the first is the current one, the others are still
// accepted while a rotation goes on. Each must be at least
// proxyauth.MinSecretBytes long; the file must not be readable by others.
func readSecretFile(flag, path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, usageError("%s: %v", flag, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, usageError("%s %s: mode %v lets others read it; chmod 600 %s", flag, path, fi.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageError("%s: %v", flag, err)
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(line) < proxyauth.MinSecretBytes {
			return nil, usageError("%s %s:%d: a secret of %d bytes; use at least %d (openssl rand -hex 32)", flag, path, n, len(line), proxyauth.MinSecretBytes)
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		return nil, usageError("%s %s: no secret in it; put one on a line (openssl rand -hex 32)", flag, path)
	}
	return out, nil
}
