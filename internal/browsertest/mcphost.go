package browsertest

import (
	_ "embed"
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/snuggen/snuggen/internal/testenv"
)

// MCPHostPackages are the published packages the test MCP Apps host is made
// of: the host side of MCP Apps (AppBridge) and the MCP TypeScript client it
// is typed against.
var MCPHostPackages = []string{"@modelcontextprotocol/ext-apps@2.0.4", "@modelcontextprotocol/client@2.4.0"}

// mcpHostJS is the test host's page script: the minimal wiring of those two
// packages (connectHost, showApp, setTheme, hostLog).
//
//go:embed mcp-host.js
var mcpHostJS string

// MCPHostPage returns a real MCP Apps host as one HTML page: mcp-host.js
// bundled (esbuild's Go API, for the browser) with MCPHostPackages,
// installed from npm into a cache (testenv.NPMPackages: missing npm fails
// under CI). The page's connectHost(url) connects to an MCP server over
// streamable HTTP; showApp(tool, sandbox) calls a tool and renders its UI
// resource in a sandboxed iframe #app with the AppBridge.
func MCPHostPage(t testing.TB) string {
	t.Helper()
	nodeModules := testenv.NPMPackages(t, MCPHostPackages...)
	res := api.Build(api.BuildOptions{
		Stdin:     &api.StdinOptions{Contents: mcpHostJS, Sourcefile: "mcp-host.js", ResolveDir: nodeModules},
		Bundle:    true,
		Write:     false,
		Format:    api.FormatIIFE,
		Platform:  api.PlatformBrowser,
		Target:    api.ES2022,
		NodePaths: []string{nodeModules},
		LogLevel:  api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		t.Fatalf("bundle the test MCP Apps host: %v", res.Errors)
	}
	js := strings.ReplaceAll(string(res.OutputFiles[0].Contents), "</script", `<\/script`)
	return "<!doctype html><html><head><meta charset=utf-8><title>MCP Apps test host</title></head><body><script>" + js + "</script></body></html>"
}
