package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/maker"
	"github.com/snuggen/snuggen/internal/fakemodel"
	"github.com/snuggen/snuggen/internal/testenv"
	"github.com/snuggen/snuggen/pack"
)

// useModel points the agent's variables at s for the test.
func useModel(t *testing.T, s *fakemodel.Server) {
	t.Helper()
	for k, v := range s.Env() {
		t.Setenv(k, v)
	}
}

// TestMakeEndToEnd: snuggen make against both wire formats writes the app
// the model fixed into its folder, with a progress line per round.
func TestMakeEndToEnd(t *testing.T) {
	app := fakemodel.CorpusApp(t, "habits")
	for _, wire := range fakemodel.Wires {
		t.Run(wire, func(t *testing.T) {
			author := fakemodel.NewAuthor(app, wire == "anthropic")
			useModel(t, fakemodel.New(t, wire, author.Answer))
			dir := filepath.Join(t.TempDir(), "habits")
			code, out, errs := run(t, "make", "--no-smoke", "-o", dir, app.Prompt)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errs)
			}
			if m := author.Missed(); len(m) > 0 {
				t.Errorf("the model was not told %q", m)
			}
			for _, want := range []string{"round 1: ", "build: 6 problems", "round 2: ", "build: ok", "bounds: 3 rounds, 1.0 MiB a reply, 10m0s in all"} {
				if !strings.Contains(errs, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errs)
				}
			}
			if !strings.Contains(out, "made "+filepath.Join(dir, "app.html")+" (Habits, 2 rounds") || !strings.Contains(out, "snuggen serve "+dir) {
				t.Errorf("stdout: %s", out)
			}
			src, err := os.ReadFile(filepath.Join(dir, "app.html"))
			if err != nil || strings.TrimSpace(string(src)) != strings.TrimSpace(app.Replies[1].Text) {
				t.Fatalf("app.html is not the fixed draft (%v)", err)
			}
			if _, err := pack.Build(t.Context(), pack.Options{Path: filepath.Join(dir, "app.html"), Strict: true}); err != nil {
				t.Fatalf("the app does not build: %v", err)
			}
		})
	}
}

// TestMakeOfflineAgentSaysSo: the offline agent cannot write apps, and the
// command says so in one line with the fix.
func TestMakeOfflineAgentSaysSo(t *testing.T) {
	t.Setenv("SNUG_AGENT", "")
	code, out, errs := run(t, "make", "a habit tracker")
	if code != exitUsage || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "offline agent cannot write apps") || !strings.Contains(lines[0], "--agent openai") {
		t.Fatalf("stderr: %q", errs)
	}
}

// TestMakeFailureWritesNothing: a model that never fixes its draft ends the
// make with the problems named, no folder for a new app, and an app being
// changed left as it was.
func TestMakeFailureWritesNothing(t *testing.T) {
	draft := fakemodel.CorpusApp(t, "habits").Replies[0].Text
	useModel(t, fakemodel.New(t, "openai", func(int, fakemodel.Turn) string { return draft }))
	dir := filepath.Join(t.TempDir(), "habits")
	code, _, errs := run(t, "make", "--no-smoke", "--rounds", "2", "-o", dir, "habits")
	if code != exitFailure || !strings.Contains(errs, "still has problems after 2 rounds") || !strings.Contains(errs, "nothing was written") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the failed make left %s (%v)", dir, err)
	}

	tips := fakemodel.CorpusApp(t, "tips").Replies[0].Text
	app := filepath.Join(t.TempDir(), "tips")
	if _, err := maker.Install(app, []byte(tips)); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(t, "make", "--no-smoke", "--rounds", "1", "--app", app, "add a chart"); code != exitFailure {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if src, _ := os.ReadFile(filepath.Join(app, "app.html")); string(src) != tips {
		t.Fatal("a failed change replaced the app")
	}
	if vs, _ := maker.Versions(app); len(vs) != 0 {
		t.Fatalf("a failed change kept versions: %v", vs)
	}
}

// TestMakeChangeKeepsVersions: --app sends the current source with the
// change; the new version replaces app.html, the old one is kept and comes
// back with --restore, which keeps the one it replaces; the folder (the
// database's key) and the app-id do not change.
func TestMakeChangeKeepsVersions(t *testing.T) {
	tips := fakemodel.CorpusApp(t, "tips").Replies[0].Text
	changed := strings.Replace(tips, "<h1>Split the bill</h1>", "<h1>Split the bill</h1>\n<p id=\"note\">Rounded up to the cent.</p>", 1)
	s := fakemodel.New(t, "anthropic", func(int, fakemodel.Turn) string { return "```html\n" + changed + "```" })
	useModel(t, s)
	app := filepath.Join(t.TempDir(), "tips")
	if _, err := maker.Install(app, []byte(tips)); err != nil {
		t.Fatal(err)
	}
	key := hostkit.KeyFromPath(filepath.Join(app, "app.html"))
	code, out, errs := run(t, "make", "--no-smoke", "--app", app, "say that amounts are rounded")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	turn := s.Turns()[0].User
	if !strings.Contains(turn, "say that amounts are rounded") || !strings.Contains(turn, strings.TrimSpace(tips)) || !strings.Contains(turn, "com.example.tips") {
		t.Fatalf("the change turn lacks the request, the source or the app-id:\n%s", turn)
	}
	if !strings.Contains(out, "--restore 1") {
		t.Errorf("stdout does not say how to restore: %s", out)
	}
	read := func() string { b, _ := os.ReadFile(filepath.Join(app, "app.html")); return string(b) }
	if read() != changed {
		t.Fatal("app.html is not the new version")
	}
	if hostkit.KeyFromPath(filepath.Join(app, "app.html")) != key || pack.ReadMeta([]byte(read()))["appId"] != "com.example.tips" {
		t.Fatal("the app's key or app-id changed")
	}
	code, out, _ = run(t, "make", "--app", app, "--versions")
	if code != 0 || !strings.HasPrefix(out, "1\t") {
		t.Fatalf("--versions: %d %q", code, out)
	}
	if code, out, errs = run(t, "make", "--app", app, "--restore", "1"); code != 0 {
		t.Fatalf("--restore: %d %s", code, errs)
	}
	if read() != tips || !strings.Contains(out, "replaced is 2") {
		t.Fatalf("restore did not bring version 1 back: %s", out)
	}
	if code, _, errs = run(t, "make", "--app", app, "--restore", "9"); code != exitFailure || !strings.Contains(errs, "keeps 1, 2") {
		t.Fatalf("restore of a missing version: %d %s", code, errs)
	}
}

// TestMakeSmokeRunFeedsBack: with Chromium, a draft that builds but throws
// when it starts is run in the real runner, and the exception goes back to
// the model, which fixes it in the third round.
func TestMakeSmokeRunFeedsBack(t *testing.T) {
	exe := testenv.Chromium(t)
	app := fakemodel.CorpusApp(t, "quotes")
	s := fakemodel.New(t, "openai", fakemodel.NewAuthor(app, true).Answer)
	useModel(t, s)
	dir := filepath.Join(t.TempDir(), "quotes")
	code, out, errs := run(t, "make", "--chromium", exe, "-o", dir, app.Prompt)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	if !strings.Contains(errs, "smoke run: 1 problem") || !strings.Contains(errs, "round 3: ") || !strings.Contains(errs, "smoke run: ok") {
		t.Errorf("progress: %s", errs)
	}
	t.Logf("progress (the loop's own time per round in brackets):\n%s", errs)
	turns := s.Turns()
	if len(turns) != 3 || !strings.Contains(turns[2].User, "Cannot set properties of null") {
		t.Fatalf("the exception did not reach the model (%d turns):\n%s", len(turns), turns[len(turns)-1].User[:1500])
	}
	src, _ := os.ReadFile(filepath.Join(dir, "app.html"))
	if strings.TrimSpace(string(src)) != strings.TrimSpace(app.Replies[2].Text) {
		t.Fatal("app.html is not the draft that ran clean")
	}
}

// TestServeMakesIntoItsData: serve with an agent that can write apps turns
// the runner's make boxes on (make-info says ready, with the bounds), and
// lists the apps made into its data directory, after the given ones.
func TestServeMakesIntoItsData(t *testing.T) {
	s := fakemodel.New(t, "anthropic", func(int, fakemodel.Turn) string { return "" })
	env := s.Env()
	data := t.TempDir()
	if _, err := maker.Install(filepath.Join(data, hostkit.MadeAppsDir, "tips"), []byte(fakemodel.CorpusApp(t, "tips").Replies[0].Text)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.html"), []byte(helloApp), 0o644); err != nil {
		t.Fatal(err)
	}
	hosts := make(chan *hostkit.Host, 1)
	o := &serveOptions{addr: "127.0.0.1:0", data: data, getenv: func(k string) string { return env[k] }, ready: func(h *hostkit.Host) { hosts <- h }}
	first, lines, _ := startServe(t, o, dir)
	if !lines.Scan() || first[1] != "test.hello" || !strings.HasPrefix(lines.Text(), "app com.example.tips ") {
		t.Fatalf("app lines %q, %q", first, lines.Text())
	}
	h := <-hosts
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.Origin(), "http")+"/ws", &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {h.Origin()}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"t":"make-info"}`)); err != nil {
		t.Fatal(err)
	}
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if json.Unmarshal(b, &m) == nil && m["t"] == "make-info" {
			if m["ready"] != true || !strings.Contains(m["bounds"].(string), "at most 3 rounds") {
				t.Fatalf("make-info: %v", m)
			}
			return
		}
	}
}

// TestMCPInstallAppFlags: install_app's server is its own; the flags that
// would put it with other apps are refused with the fix, and mcp with no
// app and no --install-app says what it needs.
func TestMCPInstallAppFlags(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "hello.html")
	if err := os.WriteFile(page, []byte(helloApp), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp"}, "or --install-app"},
		{[]string{"mcp", "--install-app", "--shared-server", "--http", "127.0.0.1:0", page}, "leave out --shared-server"},
		{[]string{"mcp", "--install-app", page}, "give no app, or serve them with --http"},
	} {
		code, _, errs := run(t, c.args...)
		if code != exitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, %s", c.args, code, errs)
		}
	}
}
