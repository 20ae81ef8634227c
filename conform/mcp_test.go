package conform_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/conform"
	"github.com/snuggen/snuggen/hostkit/mcpapps"
	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/internal/clitest"
)

// The kit under the MCP Apps adapter: built for MCP Apps hosts, served by
// snuggen mcp, rendered by a real MCP Apps host (the published AppBridge
// and MCP client in Chromium). What MCP Apps carries passes; what it cannot
// carry (raw Snug frames, the host's own open-url dialog) is skipped with
// the reason; nothing fails.
func TestKitInAnMCPAppsHost(t *testing.T) {
	doc, err := conform.Kit(context.Background(), mcpapps.Build)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), conform.AppKey+".html")
	if err := os.WriteFile(file, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	base := browsertest.ServePages(t, map[string]string{"/": browsertest.MCPHostPage(t)})
	endpoint := clitest.StartMCP(t, file, "--http", "127.0.0.1:0", "--data", t.TempDir(), "--allow-origin", base)
	tab := browsertest.NewTab(t)
	browsertest.Do(t, tab, "open the MCP Apps host", chromedp.Navigate(base+"/"))
	if tools := browsertest.Eval[[]string](t, tab, fmt.Sprintf(`connectHost(%q)`, endpoint)); len(tools) == 0 {
		t.Fatal("the server lists no tools")
	}
	browsertest.Eval[string](t, tab, fmt.Sprintf(`showApp(%q, "allow-scripts allow-forms")`, "open_"+conform.AppKey))
	ctx, cancel := context.WithTimeout(tab, 3*time.Minute)
	defer cancel()
	r, err := conform.Drive(ctx, conform.DriveOptions{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	conform.WriteTable(&b, r)
	t.Logf("report:\n%s", b.String())
	if r.Host == nil || r.Host.Transport != "mcp-apps" {
		t.Fatalf("host %+v: the kit did not see the MCP Apps transport", r.Host)
	}
	passed := 0
	for _, c := range r.Cases {
		switch c.Status {
		case conform.Fail:
			t.Errorf("%s (%s) failed: %s; expected %s; got %s", c.ID, c.Rule, c.Reason, c.Expected, c.Got)
		case conform.Skip:
			if !strings.Contains(c.Reason, "MCP Apps") {
				t.Errorf("%s skipped without naming what MCP Apps cannot carry: %s", c.ID, c.Reason)
			}
		case conform.Pass:
			passed++
		}
	}
	// What MCP Apps does carry runs: storage, the net gate's refusals,
	// open-url refusals, the sandbox probes, the 5 MiB round trip.
	for _, id := range []string{"handshake.capabilities", "db.exec", "db.kv", "db.refused-sql", "db.import-invalid", "r6.artifact", "net.loopback", "net.scheme", "open-url.refused", "c2.network", "c2.webrtc", "r5.error-objects"} {
		if c := r.Case(id); c == nil || c.Status != conform.Pass {
			t.Errorf("%s: %+v, want pass under MCP Apps", id, c)
		}
	}
	t.Logf("%d cases pass under MCP Apps", passed)
}
