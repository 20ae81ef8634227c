package mcpapps_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/snuggen/snuggen/hostkit/mcpapps"
	"github.com/snuggen/snuggen/internal/fakemodel"
)

// asUser sets the proxy's user header on every request of a client.
type asUser string

func (u asUser) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-User", string(u))
	return http.DefaultTransport.RoundTrip(r)
}

// TestSessionIsItsUsers: with the user from a proxy's header
// (Options.Authenticate), as with bearer tokens, an MCP session belongs to
// the user who opened it. Bob, holding alice's Mcp-Session-Id (a log, a
// shared proxy), gets 403 on every endpoint: he neither lists alice's
// installed apps nor installs one into her install server.
func TestSessionIsItsUsers(t *testing.T) {
	habits := fakemodel.CorpusApp(t, "habits")
	e := newEnv(t, func(o *mcpapps.Options) {
		o.Authenticate = func(r *http.Request) (string, error) {
			if u := r.Header.Get("X-Test-User"); u != "" {
				return u, nil
			}
			return "", errors.New("no user")
		}
		o.SharedServer = false
		o.Make = &mcpapps.MakeOptions{Dir: t.TempDir()}
	})
	for _, path := range []string{"/mcp", "/mcp/" + e.srv.Keys()[0]} {
		caps := &mcp.ClientCapabilities{}
		caps.AddExtension(mcpapps.Extension, map[string]any{"mimeTypes": []string{mcpapps.MIMEType}})
		c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
		alice, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: e.http.URL + path, HTTPClient: &http.Client{Transport: asUser("alice")},
		}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { alice.Close() })
		if path == "/mcp" {
			if res := install(t, alice, "habits", habits.Replies[1].Text); res.IsError {
				t.Fatalf("alice's install: %s", toolText(res))
			}
		}
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`,
			`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"install_app","arguments":{"name":"planted","html":"<!doctype html><title>x</title>"}}}`,
		} {
			req, _ := http.NewRequest("POST", e.http.URL+path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", alice.ID())
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			req.Header.Set("X-Test-User", "bob")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("%s: bob in alice's session: HTTP %d %.200s", path, res.StatusCode, b)
			}
		}
	}
}
