package hostkit_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outbound matches the ways Go code makes a network request or connection.
var outbound = regexp.MustCompile(`\bhttp\.(Client|Transport|DefaultClient|DefaultTransport|Get|Post|PostForm|Head)\b|\bnet\.Dial|\.DialContext\b|\bnet\.Dialer\b`)

// egressAllowed are the only places in hostkit that may reach the network:
// the governed network (requests an app asked for), the agent backends
// (the host's own agent endpoint, never an app-supplied URL) and replicated
// mode (the host's own PostgreSQL, object store and peer replicas, from its
// configuration and the lease rows, never an app-supplied URL).
var egressAllowed = []string{"netgate/", "agent/openai/", "agent/anthropic/", "agent/internal/sse/", "cluster/"}

// TestOnlyNetgateAndTheAgentBackendsReachTheNetwork holds the package docs'
// promise: no other code in hostkit opens an outbound connection.
func TestOnlyNetgateAndTheAgentBackendsReachTheNetwork(t *testing.T) {
	var found int
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		slash := filepath.ToSlash(path)
		for _, prefix := range egressAllowed {
			if strings.HasPrefix(slash, prefix) {
				if outbound.Match(src) {
					found++
				}
				return nil
			}
		}
		for i, line := range strings.Split(string(src), "\n") {
			if outbound.MatchString(line) && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				t.Errorf("hostkit/%s:%d: outbound network code outside netgate and the agent backends: %s", slash, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 3 {
		t.Fatalf("the allowed packages make no outbound calls any more (%d files): is the pattern stale?", found)
	}
}
