package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/hostkit/server"
	"github.com/snuggen/snuggen/internal/testenv"
	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

const helloApp = `<!doctype html>
<html><head><meta charset="utf-8">
<meta name="snug:app-id" content="test.hello">
<meta name="snug:display-name" content="Hello">
<title>Hello</title></head>
<body><p id="v">one</p><script>snug.ready.then(() => {});</script></body></html>
`

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServe runs serve on a free port and returns the first stdout line's
// fields, a reader for the following lines, and a stop function.
func startServe(t *testing.T, o *serveOptions, args ...string) (line []string, lines *bufio.Scanner, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, &IO{In: strings.NewReader(""), Out: pw, Err: &stderr}, o, args)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		cancel()
		t.Fatalf("serve printed nothing: %v; stderr: %s", <-done, stderr.String())
	}
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		go io.Copy(io.Discard, pr)
		return <-done
	}
	t.Cleanup(func() { _ = stop() })
	return strings.Fields(sc.Text()), sc, stop
}

func TestServePrintsAppLineBeforeServingAndStopsOnCancel(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.html"), []byte(helloApp), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "offline", getenv: os.Getenv}
	line, _, stop := startServe(t, o, dir)
	if len(line) != 3 || line[0] != "app" || line[1] != "test.hello" || !strings.HasSuffix(line[2], "/?app=hello") {
		t.Fatalf("first line %q, want: app test.hello <url>", line)
	}
	// The line came before the server accepts work: the URL answers now.
	res, err := http.Get(line[2])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "Snug runner") {
		t.Fatalf("runner page: %d %.80s", res.StatusCode, body)
	}
	res, err = testenv.LocalhostClient.Get(appDocURL(t, line[2], "hello"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "snug") || !strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox allow-scripts") {
		t.Fatalf("app document: %d %v", res.StatusCode, res.Header)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve after cancel: %v", err)
	}
	if _, err := http.Get(line[2]); err == nil {
		t.Fatal("still serving after cancel")
	}
}

func TestServeWatchRebuildsAndReloads(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hello.html")
	if err := os.WriteFile(file, []byte(helloApp), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "offline", getenv: os.Getenv, watch: true}
	line, lines, _ := startServe(t, o, file)
	origin := strings.TrimSuffix(line[2], "/?app=hello")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, strings.Replace(origin, "http", "ws", 1)+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	// The relay broadcasts a reload to the connections it has registered. It
	// registers one before serving it, so an answer on this connection (the
	// inspector's row for a frame to a slot with no app) shows it registered.
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"t":"frame","slot":"fence","frame":{}}`)); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("no answer to the fence frame: %v", err)
		}
		var m struct{ T string }
		if json.Unmarshal(data, &m) == nil && m.T == "inspect" {
			break
		}
	}
	if err := os.WriteFile(file, []byte(strings.Replace(helloApp, ">one<", ">two<", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("no reload message: %v", err)
		}
		var m struct{ T, App string }
		if json.Unmarshal(data, &m) == nil && m.T == "reload" {
			if m.App != "hello" {
				t.Fatalf("reload of %q", m.App)
			}
			break
		}
	}
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "rebuilt hello in ") {
		t.Fatalf("stdout after the change: %q", lines.Text())
	}
	res, err := testenv.LocalhostClient.Get(appDocURL(t, origin, "hello"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), ">two<") {
		t.Fatal("the rebuilt document is not served")
	}
}

func TestServeUsageErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hello.html")
	if err := os.WriteFile(file, []byte(helloApp), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "needs at least 1 argument"},
		{[]string{"serve", filepath.Join(dir, "missing.html")}, "missing.html"},
		{[]string{"serve", "--agent", "gpt", file}, `--agent "gpt"`},
		{[]string{"serve", "--model", "x", file}, "--agent-url and --model need"},
		{[]string{"serve", t.TempDir()}, "no apps in"},
		{[]string{"serve", "--agent-max-reply", "lots", file}, `--agent-max-reply "lots"`},
		{[]string{"serve", "--agent-max-reply", "0", file}, `--agent-max-reply "0"`},
		{[]string{"serve", "--db-timeout", "-1s", file}, `--db-timeout -1s`},
		{[]string{"serve", "--dev-loopback", "10.0.0.5:80", file}, `"10.0.0.5" is not a loopback address`},
		{[]string{"serve", "--dev-loopback", "example.com:80", file}, `--dev-loopback`},
	} {
		var out, errb bytes.Buffer
		code := Main(tc.args, strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"serve", "--help"}, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "Examples:") {
		t.Errorf("serve --help: exit %d\n%s", code, out.String())
	}
}

func TestFindAppsKeys(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.html", "todo/app.html", "notes/index.html", "empty/readme.txt"} {
		full := filepath.Join(dir, p)
		_ = os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(helloApp), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	apps, err := findApps([]string{dir, filepath.Join(dir, "a.html")})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, a := range apps {
		keys = append(keys, a.key)
	}
	if strings.Join(keys, " ") != "a notes todo a-2" {
		t.Fatalf("keys = %q", keys)
	}
}

// A file snuggen build wrote is served as it is; a raw one is packaged.
func TestServeTellsBuiltFromRaw(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "raw.html")
	if err := os.WriteFile(raw, []byte(helloApp), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := pack.Build(context.Background(), pack.Options{Path: raw})
	if err != nil {
		t.Fatal(err)
	}
	built := filepath.Join(dir, "built.html")
	if err := os.WriteFile(built, res.HTML, 0o644); err != nil {
		t.Fatal(err)
	}
	apps, err := findApps([]string{raw, built})
	if err != nil {
		t.Fatal(err)
	}
	if apps[0].built || !apps[1].built {
		t.Fatalf("raw built=%v, built built=%v", apps[0].built, apps[1].built)
	}
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "offline", getenv: os.Getenv}
	line, lines, _ := startServe(t, o, built)
	if line[1] != "test.hello" {
		t.Fatalf("built app line %q: want its meta app-id", line)
	}
	_ = lines
	r, err := testenv.LocalhostClient.Get(appDocURL(t, line[2], "built"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	want, err := server.PrepareDocument(res.HTML)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body, want) {
		t.Fatal("the built file was not served as it is (plus the prelude)")
	}
	if runtimejs.TargetOf(body) != "snug" || bytes.Count(body, []byte("globalThis.snug=")) != 1 {
		t.Fatalf("the runtime appears %d times in the served document", bytes.Count(body, []byte("globalThis.snug=")))
	}
}

// appDocURL is the address of app's document on the host whose runner is
// at runnerURL: its own host under localhost, on the runner's port.
func appDocURL(t *testing.T, runnerURL, app string) string {
	t.Helper()
	u, err := url.Parse(runnerURL)
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + server.AppLabel(app) + ".localhost:" + u.Port() + "/"
}

// Issue 28 item 1: --dev-loopback is said in serve's log and in the
// runner's app list (which the page shows as a notice) while in effect.
func TestServeDevLoopbackIsShownAndLogged(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.html"), []byte(helloApp), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), getenv: func(string) string { return "" }, devLoop: []string{"127.0.0.1:8089"}}
	sc, stderr, _ := runServeAsync(t, o, dir)
	if !sc.Scan() {
		t.Fatalf("serve printed nothing; stderr: %s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "development: apps may reach 127.0.0.1:8089 on this machine (--dev-loopback)") {
		t.Errorf("serve's log says %q", stderr.String())
	}
	fields := strings.Fields(sc.Text())
	origin := strings.TrimSuffix(fields[len(fields)-1], "/?app=hello")
	res, err := http.Get(origin + "/apps.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var list struct{ Notices []string }
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil || len(list.Notices) != 1 || !strings.Contains(list.Notices[0], "127.0.0.1:8089") {
		t.Errorf("apps.json notices = %q (%v)", list.Notices, err)
	}
}

// Issue 28 item 2: one app that does not build no longer stops serve DIR.
// The others are served; the broken one is listed on stderr and in the
// runner's list with its diagnostics (file:line:col, why, fix); with
// --watch, fixing it makes it appear without a restart.
func TestServeDirServesTheAppsThatBuild(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.html"), []byte(helloApp), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(helloApp, "test.hello", "test.bad", 1)
	broken := strings.Replace(bad, "snug.ready.then(() => {});", "snug.ready.then(() => {});\nlocalStorage.setItem(\"k\", \"v\");", 1)
	badFile := filepath.Join(dir, "bad.html")
	if err := os.WriteFile(badFile, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), getenv: func(string) string { return "" }, watch: true}
	sc, stderr, _ := runServeAsync(t, o, dir)
	if !sc.Scan() {
		t.Fatalf("serve printed nothing; stderr: %s", stderr.String())
	}
	fields := strings.Fields(sc.Text())
	if len(fields) != 3 || fields[1] != "test.hello" {
		t.Fatalf("serve's first line is %q, want the app that builds", sc.Text())
	}
	if !strings.Contains(stderr.String(), "app bad does not build") || !strings.Contains(stderr.String(), "bad.html:7:") || !strings.Contains(stderr.String(), "snug.db.get/snug.db.set") {
		t.Errorf("stderr does not list the broken app with its place and fix:\n%s", stderr.String())
	}
	origin := strings.TrimSuffix(fields[2], "/?app=hello")
	list := func() map[string]server.AppInfo {
		t.Helper()
		res, err := http.Get(origin + "/apps.json")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var l struct{ Apps []server.AppInfo }
		if err := json.NewDecoder(res.Body).Decode(&l); err != nil {
			t.Fatal(err)
		}
		m := map[string]server.AppInfo{}
		for _, a := range l.Apps {
			m[a.App] = a
		}
		return m
	}
	apps := list()
	if a := apps["bad"]; !a.Broken || len(a.Problems) != 1 || !strings.Contains(a.Problems[0], "bad.html:7:") || !strings.Contains(a.Problems[0], "localStorage") {
		t.Fatalf("the runner's list has the broken app as %+v", a)
	}
	if a := apps["hello"]; a.Broken || a.Problems != nil {
		t.Fatalf("the good app is listed as %+v", a)
	}
	if err := os.WriteFile(badFile, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for list()["bad"].Broken {
		if time.Now().After(deadline) {
			t.Fatalf("the fixed app is still listed as broken; stderr:\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "app test.bad ") {
			return
		}
	}
	t.Fatal("serve printed no line for the fixed app")
}
