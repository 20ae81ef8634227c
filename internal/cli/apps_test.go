package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/hostkit/agent/agentenv"
)

// build DIR and serve DIR see the same apps, by one rule: .html and .htm
// files, a subfolder's app.html before its index.html, no node_modules, no
// dot entries (issue 13 item 4: they had drifted apart).
func TestBuildAndServeSeeTheSameApps(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.html", "b.htm", "c/app.html", "c/index.html", "d/index.html", "e/readme.txt",
		"node_modules/x.html", "node_modules/pkg/app.html", ".hidden/app.html", ".draft.html"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(helloApp), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"a.html", "b.htm", "c/app.html", "d/index.html"}

	served, err := findApps([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range served {
		got = append(got, rel(t, dir, a.path))
	}
	if !slices.Equal(got, want) {
		t.Errorf("serve finds %q, want %q", got, want)
	}
	jobs, err := planJobs(&buildOptions{input: dir, out: filepath.Join(dir, "dist")}, true)
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	var outs []string
	for _, j := range jobs {
		got = append(got, rel(t, dir, j.input))
		outs = append(outs, j.file)
	}
	if !slices.Equal(got, want) {
		t.Errorf("build finds %q, want %q", got, want)
	}
	if w := []string{"a.html", "b.htm", "c.html", "d.html"}; !slices.Equal(outs, w) {
		t.Errorf("build writes %q, want %q", outs, w)
	}

	// A folder with its own app page is one app for both.
	served, err = findApps([]string{filepath.Join(dir, "c")})
	if err != nil || len(served) != 1 || rel(t, dir, served[0].path) != "c/app.html" {
		t.Fatalf("serve c/: %v %v", served, err)
	}
	jobs, err = planJobs(&buildOptions{input: filepath.Join(dir, "c"), out: t.TempDir()}, true)
	if err != nil || len(jobs) != 1 || rel(t, dir, jobs[0].input) != "c/app.html" {
		t.Fatalf("build c/: %v %v", jobs, err)
	}
}

func rel(t *testing.T, dir, p string) string {
	t.Helper()
	r, err := filepath.Rel(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(r)
}

// Usage errors are typed (FlagError) and exit 2, whoever found them: cobra's
// flag parsing, an argument count, an unknown verb or subcommand (with a
// suggestion), a command's own check. Nothing matches cobra's text.
func TestUsageErrorsAreTyped(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"buidl", "x.html"}, `unknown command "buidl" for "snuggen"; did you mean build?`},
		{[]string{"check", "frmae"}, `unknown command "frmae" for "snuggen check"; did you mean frame?`},
		{[]string{"build"}, "snuggen build takes 1 argument(s), got 0"},
		{[]string{"version", "extra"}, `snuggen version takes no arguments, got ["extra"]`},
		{[]string{"build", "--bogus", "x.html"}, "unknown flag: --bogus (see 'snuggen build --help')"},
		{[]string{"serve", "--agent", "gpt", "x.html"}, `--agent "gpt": use offline, openai, anthropic`},
	} {
		var out, errOut bytes.Buffer
		if code := Main(c.args, nil, &out, &errOut); code != exitUsage || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, errOut.String(), exitUsage, c.want)
		}
	}
	var out, errOut bytes.Buffer
	if code := Main([]string{"check"}, nil, &out, &errOut); code != exitOK || !strings.Contains(out.String(), "frame") {
		t.Errorf("check alone: exit %d, help %q", code, out.String())
	}
}

// Help lists the verbs in NewRoot's order; gen, which works only in a
// snuggen source tree, is hidden but runs.
func TestHelpListsVerbsGenHidden(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"--help"}, nil, &out, &errOut); code != exitOK {
		t.Fatalf("--help: exit %d", code)
	}
	help := out.String()
	last := -1
	for _, verb := range []string{"new", "build", "serve", "mcp", "check", "prompt", "net", "version"} {
		i := strings.Index(help, "\n  "+verb+" ")
		if i < 0 || i < last {
			t.Errorf("help lists %s out of order or not at all:\n%s", verb, help)
		}
		last = i
	}
	if strings.Contains(help, "\n  gen ") {
		t.Errorf("help lists gen:\n%s", help)
	}
	out.Reset()
	if code := Main([]string{"gen", "--help"}, nil, &out, &errOut); code != exitOK || !strings.Contains(out.String(), "snuggen source tree") {
		t.Errorf("gen --help: exit %d, %q", code, out.String())
	}
}

// Flag values complete in the shell (cobra's __complete protocol).
func TestFlagValuesComplete(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "serve", "--agent", ""}, agentenv.Names},
		{[]string{"__complete", "mcp", "--agent", "o"}, []string{"offline", "openai"}},
		{[]string{"__complete", "build", "--target", ""}, []string{"snug", "mcp-app"}},
		{[]string{"__complete", "mcp", "--ui", ""}, []string{"auto", "always", "never"}},
		{[]string{"__complete", "serve", ""}, []string{"html", "htm"}},
	} {
		var out, errOut bytes.Buffer
		Main(c.args, nil, &out, &errOut)
		for _, w := range c.want {
			if !strings.Contains(out.String(), w+"\n") {
				t.Errorf("%q: completions %q lack %q", c.args, out.String(), w)
			}
		}
	}
}

// serve chooses its agent as every host does (agentenv: SNUG_AGENT and the
// backend's variables), the flags overriding the environment.
func TestServeAgentFromEnvWithFlagOverrides(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		o       serveOptions
		wantErr string
	}{
		{serveOptions{getenv: env()}, ""},
		{serveOptions{getenv: env(agentenv.Var, "openai", "OPENAI_API_KEY", "k", "OPENAI_MODEL", "m")}, ""},
		{serveOptions{getenv: env(agentenv.Var, "openai", "OPENAI_API_KEY", "k")}, "model"},
		{serveOptions{getenv: env(agentenv.Var, "openai", "OPENAI_API_KEY", "k"), model: "m"}, ""},
		{serveOptions{getenv: env(agentenv.Var, "openai"), agent: "offline"}, ""},
		{serveOptions{getenv: env(agentenv.Var, "nonsense")}, "nonsense"},
		{serveOptions{getenv: env(), model: "m"}, "--agent-url and --model need"},
	} {
		b, err := c.o.backend()
		switch {
		case c.wantErr == "" && (err != nil || b == nil):
			t.Errorf("%+v: %v", c.o, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%+v: %v, want an error about %q", c.o, err, c.wantErr)
		}
	}
}

// serve --watch watches what the packager read: a page's own script file
// beside it (the page is not a folder app, so its folder is not the app's)
// rebuilds the app when edited. Before, only the page itself was watched.
func TestServeWatchFollowsThePackagersInputs(t *testing.T) {
	dir := t.TempDir()
	page, script := filepath.Join(dir, "clock.html"), filepath.Join(dir, "clock.js")
	if err := os.WriteFile(page, []byte(`<!doctype html><title>Clock</title><meta name="snug:app-id" content="test.clock"><p id="out"></p><script src="clock.js"></script>`), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(word string, pad int) {
		if err := os.WriteFile(script, []byte(`document.getElementById("out").textContent = "`+word+`";`+strings.Repeat(" ", pad)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("first-version", 0)
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), getenv: func(string) string { return "" }, watch: true}
	lines, stderr, _ := runServeAsync(t, o, page)
	if !lines.Scan() {
		t.Fatalf("serve printed nothing: %s", stderr.String())
	}
	f := strings.Fields(lines.Text())
	docURL := appDocURL(t, f[len(f)-1], "clock")
	if !strings.Contains(getDoc(t, docURL), "first-version") {
		t.Fatal("the first build lacks its script")
	}
	rebuilt := make(chan string, 1)
	go func() {
		if lines.Scan() {
			rebuilt <- lines.Text()
		}
	}()
	// The watcher's baseline is taken after the app line: the edit is
	// written again (growing) until it is noticed.
	write("second-version", 0)
	deadline := time.After(30 * time.Second)
	for n := 1; ; n++ {
		select {
		case l := <-rebuilt:
			if !strings.HasPrefix(l, "rebuilt clock ") {
				t.Fatalf("serve said %q", l)
			}
			if doc := getDoc(t, docURL); !strings.Contains(doc, "second-version") {
				t.Fatalf("rebuilt without the edited script:\n%.300s", doc)
			}
			return
		case <-deadline:
			t.Fatalf("an edit of the page's script was not seen; stderr: %s", stderr.String())
		case <-time.After(100 * time.Millisecond):
			if n%10 == 0 {
				write("second-version", n)
			}
		}
	}
}
