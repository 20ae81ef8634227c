package examples

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/internal/clitest"
	"github.com/snuggen/snuggen/internal/fakemodel"
)

// TestInstallAppInAnMCPAppsHost (issue 29 item 4): the host's model writes
// an app in the conversation. A scripted model (the corpus's habits author,
// which fixes exactly what it is told) calls install_app of `snuggen mcp
// --install-app --http` through the published MCP client of the test host:
// its first draft gets the build's diagnostics as the tool's result, and
// its corrected one is installed; the client is told the tools and
// resources changed, lists the new open tool, and the published AppBridge
// renders the app in Chromium with its storage working
// (TestInstallAppIsPerUser has the users and the restart).
func TestInstallAppInAnMCPAppsHost(t *testing.T) {
	base := browsertest.ServePages(t, map[string]string{"/": browsertest.MCPHostPage(t)})
	data := t.TempDir()
	endpoint := clitest.StartMCP(t, "--install-app", "--http", "127.0.0.1:0", "--data", data, "--allow-origin", base)
	h := &mcpTab{t: t, tab: browsertest.NewTab(t), base: base, endpoints: map[string]string{"make": endpoint}}
	h.load()

	habits := fakemodel.CorpusApp(t, "habits")
	author := fakemodel.NewAuthor(habits, false)
	context := ""
	rounds := 0
	var result struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent map[string]any `json:"structuredContent"`
	}
	for rounds < 4 {
		rounds++
		draft := author.Answer(rounds, fakemodel.Turn{User: context})
		raw := browsertest.Eval[string](t, h.tab, fmt.Sprintf(`callTool("install_app", {name: "habits", html: %s}, "make").then(JSON.stringify)`, jsString(draft)))
		result.IsError, result.StructuredContent = false, nil
		if err := json.Unmarshal([]byte(raw), &result); err != nil {
			t.Fatal(err)
		}
		if !result.IsError {
			break
		}
		// The model's context: what it wrote and what the tool answered.
		context = draft + "\n" + result.Content[0].Text
	}
	if m := author.Missed(); len(m) > 0 {
		t.Errorf("install_app's answers did not tell the model %q", m)
	}
	if result.IsError || rounds != 2 || result.StructuredContent["openTool"] != "open_made-habits" {
		t.Fatalf("after %d calls: %+v", rounds, result)
	}
	h.waitChanged("make tools", "make resources")
	if tools := browsertest.Eval[[]string](t, h.tab, `connectHost(`+jsString(endpoint)+`, "make")`); !slices.Contains(tools, "open_made-habits") {
		t.Fatalf("the host lists %v", tools)
	}
	mime := browsertest.Eval[string](t, h.tab, `showApp("open_made-habits", "allow-scripts allow-forms", "make", "app")`)
	if mime != "text/html;profile=mcp-app" {
		t.Fatalf("resource MIME type %q", mime)
	}
	a := &app{t: t, f: browsertest.FrameOf(t, h.tab, "#app")}
	a.waitFor("snug.ready", `typeof snug == "object" && snug.capabilities !== undefined`)
	if got := a.eval(`snug.db.set("habits", [{name: "Read", days: [], tip: ""}]).then(() => snug.db.get("habits")).then((h) => h.map((x) => x.name).join())`); got != "Read" {
		t.Fatalf("the app's storage holds %q", got)
	}
	if !strings.Contains(result.Content[0].Text, "open_made-habits") {
		t.Errorf("the result does not name the open tool: %q", result.Content[0].Text)
	}
}

// waitChanged waits until the host has been told each of what changed.
func (h *mcpTab) waitChanged(what ...string) {
	h.t.Helper()
	for _, w := range what {
		browsertest.WaitFor(h.t, h.tab, "notifications: "+w, `hostLog.changed.includes(`+jsString(w)+`)`)
	}
}
