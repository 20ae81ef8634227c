// Command all runs every performance figure of snuggen against its anchor or
// floor in one run, on this machine, and prints one table with the ratios
// and the goals (issue 16):
//
//	go run ./bench/all                # from the repository root
//	go run ./bench/all -runs 20 -count 5
//
// Rows:
//   - build: `snuggen build bench/build-app` against Vite +
//     vite-plugin-singlefile (the usual single-file recipe) and against the
//     bare esbuild CLI bundling the same JS and CSS (the floor: one process,
//     no HTML, no inlining), wall time, runs interleaved;
//   - kvGet through WebSocket → relay → broker → SQLite and back, against a
//     bare coder/websocket echo with the same message sizes, 1 and 16
//     clients, in one `go test -bench` process;
//   - app-message with the offline agent: asks/s at saturation (100
//     instances), p99 at 1,000 asks/s from 1,000 instances;
//   - memory per idle page connection (heap + stacks);
//   - runtime bytes (min+gzip): the full runtime, the tree-shaken runtimes of
//     an ask-only app and an ask + db + forms app, the MCP flavour, and the
//     @modelcontextprotocol/ext-apps app client bundled the same way.
//
// snuggen and the build's floor binary are built as the README installs
// snuggen, with CGO_ENABLED=0 (one static file, as the npm esbuild
// binary is); they and esbuild's native binary are timed as fresh copies,
// each written in one write(2) (rewrite), since how a binary's file was
// written changes its start. The output's header says so.
//
// npm packages (vite, vite-plugin-singlefile, esbuild,
// @modelcontextprotocol/ext-apps) are installed into bench/.cache on first
// use; when npm cannot install them, their rows are skipped with a note.
// Report the machine's load (printed first) with the table: the figures are
// only comparable on a quiet machine.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

var (
	runs      = flag.Int("runs", 10, "runs of each build command (Vite: at most 5)")
	count     = flag.Int("count", 3, "repeats of each Go benchmark (the median is shown)")
	benchtime = flag.String("benchtime", "1s", "go test -benchtime for the relay benchmarks")
	noNPM     = flag.Bool("no-npm", false, "skip the rows that need npm packages")
)

type row struct {
	path, ours, anchor, ratio, goal string
	met                             string // "yes", "NO" or "" (no goal, or skipped)
	load                            string // the 1-minute load average when the row was measured
}

// add appends r with the machine's load now.
func add(r row) {
	r.load = load1()
	rows = append(rows, r)
}

// load1 is the 1-minute load average ("" where /proc/loadavg is missing).
func load1() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return ""
}

var (
	rows  []row
	notes []string
)

func main() {
	flag.Parse()
	root, err := os.Getwd()
	if err == nil {
		_, err = os.Stat(filepath.Join(root, "bench", "build-app", "index.html"))
	}
	if err != nil {
		fatal("run from the repository root: go run ./bench/all")
	}
	cache := filepath.Join(root, "bench", ".cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		fatal(err.Error())
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("bench/all on %d CPUs, %s/%s, load average %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
	fmt.Printf("snuggen and the floor binaries built as installed, CGO_ENABLED=0 go build (static, %s); they and esbuild's native binary timed as copies written in one write(2)\n", runtime.Version())

	npmOK := !*noNPM && npmInstall(cache)
	buildRows(root, cache, npmOK)
	instructionRows(root, cache, npmOK)
	goBenchRows(root)
	sizeRows(root, cache, npmOK)

	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("\nload average at the end: %s\n\n", strings.Join(strings.Fields(string(load))[:3], " "))
	printTable()
}

func fatal(msg string) {
	fmt.Fprintln(os.Stderr, "bench/all:", msg)
	os.Exit(1)
}

func progress(format string, args ...any) { fmt.Fprintf(os.Stderr, "bench/all: "+format+"\n", args...) }

// npmInstall installs the npm packages into cache unless they are there.
func npmInstall(cache string) bool {
	nm := filepath.Join(cache, "node_modules")
	need := []string{"vite/package.json", "vite-plugin-singlefile/package.json", "esbuild/package.json", "@modelcontextprotocol/ext-apps/package.json"}
	missing := false
	for _, p := range need {
		if _, err := os.Stat(filepath.Join(nm, p)); err != nil {
			missing = true
		}
	}
	if !missing {
		return true
	}
	progress("installing vite, vite-plugin-singlefile, esbuild and @modelcontextprotocol/ext-apps into bench/.cache ...")
	if _, err := os.Stat(filepath.Join(cache, "package.json")); err != nil {
		os.WriteFile(filepath.Join(cache, "package.json"), []byte(`{"name":"snuggen-bench","private":true,"type":"module"}`+"\n"), 0o644)
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--silent", "-D", "vite@8", "vite-plugin-singlefile", "esbuild", "@modelcontextprotocol/ext-apps")
	cmd.Dir = cache
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		notes = append(notes, "npm could not install the anchors ("+err.Error()+"): the Vite, esbuild and ext-apps rows are skipped")
		return false
	}
	return true
}

// timing is one command's repeated measurements.
type timing struct{ wall, cpu []time.Duration }

func (t *timing) run(dir string, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.Bytes())
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	t.wall = append(t.wall, wall)
	t.cpu = append(t.cpu, cpu)
	return nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func verdict(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO"
}

// buildRows times snuggen build against esbuild and Vite (with npm) on
// bench/build-app, interleaved, and adds their rows.
func buildRows(root, cache string, npmOK bool) {
	progress("building snuggen ...")
	bin := filepath.Join(cache, "snuggen")
	if err := staticBuild(root, bin, "./cmd/snuggen"); err != nil {
		fatal(err.Error())
	}
	out, err := os.MkdirTemp("", "bench-all-")
	if err != nil {
		fatal(err.Error())
	}
	defer os.RemoveAll(out)
	app := filepath.Join(root, "bench", "build-app")
	snug := func(t *timing) error {
		return t.run(root, bin, "build", filepath.Join(app, "index.html"), "-o", filepath.Join(out, "snuggen.html"))
	}
	esbuildBin := esbuildBinary(cache, npmOK)
	viteBin := filepath.Join(cache, "node_modules", ".bin", "vite")
	viteConfig := filepath.Join(cache, "vite.config.mjs")
	esb := func(t *timing) error {
		return t.run(root, esbuildBin, filepath.Join(app, "src", "main.js"), filepath.Join(app, "style.css"), "--bundle", "--minify", "--format=esm",
			"--loader:.svg=dataurl", "--outdir="+filepath.Join(out, "esbuild"), "--log-level=warning")
	}
	vite := func(t *timing) error {
		return t.run(root, viteBin, "build", app, "--config", viteConfig, "--outDir", filepath.Join(out, "vite"))
	}
	if npmOK {
		os.WriteFile(viteConfig, []byte(`import { viteSingleFile } from "vite-plugin-singlefile";
export default { plugins: [viteSingleFile()], logLevel: "silent", build: { emptyOutDir: true } };
`), 0o644)
	}
	progress("build: %d runs each, interleaved ...", *runs)
	var s, e, v timing
	var warm timing
	if err := snug(&warm); err != nil {
		fatal(err.Error())
	}
	if npmOK {
		if err := esb(&warm); err != nil {
			fatal(err.Error())
		}
		if err := vite(&warm); err != nil {
			notes = append(notes, "vite build failed, its row is skipped: "+err.Error())
			viteBin = ""
		}
	}
	for i := 0; i < *runs; i++ {
		must(snug(&s))
		if npmOK {
			must(esb(&e))
			if viteBin != "" && i < 5 {
				must(vite(&v))
			}
		}
	}
	addBuildRows(median(s.wall), median(e.wall), median(v.wall), npmOK, npmOK && viteBin != "")
}

// esbuildBinary is the esbuild to time: with npm, its native binary
// written as snuggen's is (rewrite), else npm's file.
func esbuildBinary(cache string, npmOK bool) string {
	esbuildBin := filepath.Join(cache, "node_modules", ".bin", "esbuild")
	if npmOK {
		native := filepath.Join(cache, "esbuild")
		if err := rewrite(nativeEsbuild(cache), native); err == nil {
			esbuildBin = native
		} else {
			notes = append(notes, "esbuild's native binary could not be copied, npm's file is timed: "+err.Error())
		}
	}
	return esbuildBin
}

// addBuildRows adds the build rows from the medians of snuggen (S),
// esbuild (E) and Vite (V): against Vite when it ran, against esbuild
// when npm did.
func addBuildRows(S, E, V time.Duration, npmOK, viteOK bool) {
	if viteOK {
		r := float64(S) / float64(V)
		add(row{"build, `bench/build-app` (wall, median)", ms(S), "Vite + singlefile " + ms(V), fmt.Sprintf("%.3f", r), "≤ 0.035", verdict(r <= 0.035), ""})
	} else {
		add(row{"build, `bench/build-app` (wall, median)", ms(S), "Vite: skipped (npm)", "", "≤ 0.035", "", ""})
	}
	if npmOK {
		r := float64(S) / float64(E)
		add(row{"build, per process (wall, median)", ms(S), "bare esbuild CLI " + ms(E), fmt.Sprintf("%.2f×", r), "≤ 1.25×", verdict(r <= 1.25), ""})
	}
}

// staticBuild runs `go build -o bin args...` in dir as the README installs
// snuggen: without cgo, so the binary is one static file (no dynamic loader,
// no libc resolver), like the npm esbuild binary it is measured against.
func staticBuild(dir, bin string, args ...string) error {
	linked := bin + ".link"
	cmd := exec.Command("go", append([]string{"build", "-o", linked}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	defer os.Remove(linked)
	return rewrite(linked, bin)
}

// rewrite writes a fresh copy of the executable src to dst in one write(2).
// How a binary's file was written changes how fast it starts while its
// pages stay cached (likely the page cache's folio sizes): the
// same snuggen bytes ran `snuggen version` in 8.0 ms of CPU as the linker
// wrote them (through mmap), 6.4–6.8 ms copied by cp, 5.3–5.8 ms written in
// one write; npm's esbuild file 6.2 ms, one write 3.6 ms. bench/all times
// snuggen, its floor binary and esbuild's native binary each written this
// one way, so both sides of a ratio start from the same state.
func rewrite(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	os.Remove(dst)
	return os.WriteFile(dst, b, 0o755)
}

// nativeEsbuild is where npm puts esbuild's native binary for this platform.
func nativeEsbuild(cache string) string {
	return filepath.Join(cache, "node_modules", "@esbuild", runtime.GOOS+"-"+map[string]string{"amd64": "x64"}[runtime.GOARCH], "bin", "esbuild")
}

// floorBinary builds the libraries' start, cache/floor: a main package that
// imports (blank) every package outside this module that a package of
// snuggen's binary imports, and prints one line. Every init of the
// libraries (and of the standard library) runs as in snuggen; none of
// snuggen's own does. The package exists only in a build overlay.
func floorBinary(root, cache string) (string, error) {
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %v", err)
	}
	m := strings.TrimSpace(string(mod))
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./cmd/snuggen").Output()
	if err != nil {
		return "", fmt.Errorf("go list -deps: %v", err)
	}
	own := func(p string) bool { return p == m || strings.HasPrefix(p, m+"/") }
	var imports []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !own(f[0]) {
			continue
		}
		for _, p := range f[1:] {
			if !own(p) && p != "os" && !slices.Contains(imports, p) {
				imports = append(imports, p)
			}
		}
	}
	slices.Sort(imports)
	var src strings.Builder
	src.WriteString("// The libraries' start, the floor of snuggen's build (bench/all).\npackage main\n\nimport (\n\t\"os\"\n")
	for _, p := range imports {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	src.WriteString(")\n\nfunc main() { os.Stdout.WriteString(\"floor\\n\") }\n")
	dir, err := os.MkdirTemp("", "bench-floor-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	mainGo := filepath.Join(dir, "main.go")
	overlay := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(mainGo, []byte(src.String()), 0o644); err != nil {
		return "", err
	}
	ov := fmt.Sprintf(`{"Replace":{%q:%q}}`, filepath.Join(root, "bench", "all", "floor", "main.go"), mainGo)
	if err := os.WriteFile(overlay, []byte(ov), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(cache, "floor")
	if err := staticBuild(root, bin, "-overlay", overlay, "./bench/all/floor"); err != nil {
		return "", err
	}
	return bin, nil
}

func must(err error) {
	if err != nil {
		fatal(err.Error())
	}
}

// bench is one benchmark's metrics over its repeats: unit → values.
type bench map[string][]float64

func (b bench) med(unit string) float64 {
	v := slices.Clone(b[unit])
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	return v[len(v)/2]
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+\d+\s+(.*)$`)

func goBench(root, pkg, pattern, benchtime string, count int) map[string]bench {
	progress("go test -bench '%s' -benchtime %s -count %d %s ...", pattern, benchtime, count, pkg)
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", pattern, "-benchtime", benchtime, "-count", strconv.Itoa(count), pkg)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		fatal("go test: " + string(out))
	}
	res := map[string]bench{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := m[1]
		f := strings.Fields(m[3])
		if res[name] == nil {
			res[name] = bench{}
		}
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				res[name][f[i+1]] = append(res[name][f[i+1]], v)
			}
		}
	}
	return res
}

func goBenchRows(root string) {
	const pkg = "./hostkit/broker/"
	r := goBench(root, pkg, `^(BenchmarkKVGet|BenchmarkEcho)$/(relay-1-noinspect|relay-16|relay-16-noinspect|ws-1|ws-16|direct|broker-only)$`, *benchtime, *count)
	kv1, echo1 := r["BenchmarkKVGet/relay-1-noinspect"].med("ns/op"), r["BenchmarkEcho/ws-1"].med("ns/op")
	if kv1 > 0 && echo1 > 0 {
		x := kv1 / echo1
		add(row{"kvGet, 1 client, inspector off (median)", fmt.Sprintf("%.1f µs", kv1/1000), fmt.Sprintf("coder/websocket echo, same sizes %.1f µs", echo1/1000), fmt.Sprintf("%.2f×", x), "≤ 1.4×", verdict(x <= 1.4), ""})
		// The floor: the echo's round trip plus the broker's own work on
		// the frame with no socket (parse, the handler, SQLite, the
		// answer's bytes), and SQLite's read called directly.
		bo, direct := r["BenchmarkKVGet/broker-only"].med("ns/op"), r["BenchmarkKVGet/direct"].med("ns/op")
		if bo > 0 {
			f := echo1 + bo
			add(row{"floor: echo + the broker alone (parse, handler, SQLite, answer; no socket)", fmt.Sprintf("kvGet %.1f µs", kv1/1000), fmt.Sprintf("%.1f + %.1f = %.1f µs (SQLite's read alone %.1f µs)", echo1/1000, bo/1000, f/1000, direct/1000), fmt.Sprintf("%.2f× (floor/echo %.2f×)", kv1/f, f/echo1), "", "", ""})
		}
	}
	on, off, echo16 := r["BenchmarkKVGet/relay-16"].med("kvGet/s"), r["BenchmarkKVGet/relay-16-noinspect"].med("kvGet/s"), r["BenchmarkEcho/ws-16"].med("msg/s")
	if echo16 > 0 {
		a, b := on/echo16, off/echo16
		add(row{"kvGet, 16 clients, inspector on / off (median)", fmt.Sprintf("%.1fk/s / %.1fk/s", on/1000, off/1000), fmt.Sprintf("echo %.1fk/s", echo16/1000), fmt.Sprintf("%.2f / %.2f", a, b), "≥ 0.6 / ≥ 0.8", verdict(a >= 0.6 && b >= 0.8), ""})
	}
	r = goBench(root, pkg, `^BenchmarkAppMessage$/^(mock-100-saturated-noinspect|mock-100-saturated|mock-1000-paced)$`, "5000x", *count)
	satOff, satOn := r["BenchmarkAppMessage/mock-100-saturated-noinspect"].med("asks/s"), r["BenchmarkAppMessage/mock-100-saturated"].med("asks/s")
	p99 := r["BenchmarkAppMessage/mock-1000-paced"].med("p99-ms")
	rate := r["BenchmarkAppMessage/mock-1000-paced"].med("asks/s")
	add(row{"app-message at saturation, 100 instances, mock agent (inspector off / on)", fmt.Sprintf("%.1fk / %.1fk asks/s", satOff/1000, satOn/1000), "issue 16 measured ≈ 10k asks/s", fmt.Sprintf("%.2f×", satOff/10000), "≥ 2× (20k asks/s)", verdict(satOff >= 20000), ""})
	// The issue measured its ≈ 10k asks/s beside a bare echo of 124k msg/s;
	// this machine's echo is slower, so the goal is also read as a ratio to
	// the echo of this run (BenchmarkEcho/ws-16, above): 2× the issue's.
	if echo16 > 0 && satOff > 0 {
		const issueRatio = 10000.0 / 124000
		a, b := satOff/echo16, satOn/echo16
		add(row{"app-message at saturation over this run's echo (inspector off / on)", fmt.Sprintf("%.3f / %.3f", a, b), fmt.Sprintf("issue 16: 10k asks/s over echo 124k msg/s = %.3f", issueRatio), fmt.Sprintf("%.2f× / %.2f×", a/issueRatio, b/issueRatio), "≥ 2× the issue's ratio", verdict(a >= 2*issueRatio), ""})
	}
	add(row{"app-message p99, 1,000 instances at 1,000 asks/s", fmt.Sprintf("%.2f ms (%.0f asks/s)", p99, rate), "", "", "< 5 ms", verdict(p99 > 0 && p99 < 5), ""})
	r = goBench(root, pkg, `^BenchmarkIdleConn$`, "1x", *count)
	ic := r["BenchmarkIdleConn"]
	tot := ic.med("B/conn")
	add(row{"memory per idle page connection (median)", fmt.Sprintf("%.1f KB (heap %.1f + stack %.1f)", tot/1000, ic.med("heap-B/conn")/1000, ic.med("stack-B/conn")/1000), "", "", "≤ 12 KB", verdict(tot <= 12000), ""})
}

func gz(b []byte) int {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Len()
}

// appRuntime builds the app and returns the runtime script the build
// injected: the first inline script of the output (the build places it
// first in <head>, before any script of the app).
func appRuntime(html string) ([]byte, error) {
	res, err := pack.Build(context.Background(), pack.Options{Path: "index.html", HTML: []byte(html)})
	if err != nil {
		return nil, err
	}
	out := string(res.HTML)
	i := strings.Index(out, "<script>")
	j := strings.Index(out[max(i, 0):], "</script>")
	if i < 0 || j < 0 {
		return nil, fmt.Errorf("no inline runtime script in the built page")
	}
	return []byte(out[i+len("<script>") : i+j]), nil
}

const askApp = `<!doctype html><title>Ask</title><input id=q><pre id=out></pre>
<script type="module">
document.querySelector("#q").addEventListener("change", async (e) => {
  document.querySelector("#out").textContent = (await snug.ask("explain", { word: e.target.value })).text;
});
</script>`

const askDBFormsApp = `<!doctype html><title>Notes</title>
<form id=f><input name=note required><button>Add</button></form><ul id=list></ul>
<script type="module">
const list = document.querySelector("#list");
await snug.db.exec("create table if not exists notes (body text)");
const show = async () => {
  list.replaceChildren(...(await snug.db.query("select body from notes")).map((r) => Object.assign(document.createElement("li"), { textContent: r.body })));
};
document.querySelector("#f").addEventListener("submit", async (e) => {
  e.preventDefault();
  const note = new FormData(e.target).get("note");
  const { summary } = await snug.ask("summarize", { note });
  await snug.db.exec("insert into notes values (?)", [summary || note]);
  await snug.db.set("last", note);
  show();
});
show();
</script>`

func sizeRows(root, cache string, npmOK bool) {
	progress("runtime sizes ...")
	// As a page carries them: without the generated-file banner.
	full, mcp := gz(runtimejs.Injected(runtimejs.Script)), gz(runtimejs.Injected(runtimejs.ScriptMCP))
	add(row{"runtime, full (`dist/snug.js` as injected, min+gzip)", fmt.Sprintf("%d B", full), "", "", "≤ 4,096 B", verdict(full <= 4096), ""})
	for _, a := range []struct {
		name, html string
		goal       int
	}{{"runtime, ask-only app (tree-shaken, min+gzip)", askApp, 2400}, {"runtime, ask + db + forms app (tree-shaken, min+gzip)", askDBFormsApp, 3000}} {
		rt, err := appRuntime(a.html)
		if err != nil {
			add(row{a.name, "build failed: " + err.Error(), "", "", fmt.Sprintf("≤ %d B", a.goal), "NO", ""})
			continue
		}
		n := gz(rt)
		add(row{a.name, fmt.Sprintf("%d B", n), fmt.Sprintf("full %d B", full), fmt.Sprintf("%.2f", float64(n)/float64(full)), fmt.Sprintf("≤ %s B", thousands(a.goal)), verdict(n <= a.goal), ""})
	}
	ext := "skipped (npm)"
	ratio := ""
	if npmOK {
		res := api.Build(api.BuildOptions{
			Stdin: &api.StdinOptions{Contents: `import { App, PostMessageTransport } from "@modelcontextprotocol/ext-apps";
globalThis.mcpApp = { App, PostMessageTransport };`, ResolveDir: cache, Sourcefile: "entry.js", Loader: api.LoaderJS},
			Bundle: true, Format: api.FormatIIFE, Target: api.ES2022, Platform: api.PlatformBrowser,
			MinifyWhitespace: true, MinifyIdentifiers: true, MinifySyntax: true, TreeShaking: api.TreeShakingTrue,
			LegalComments: api.LegalCommentsNone, Charset: api.CharsetUTF8, Write: false, LogLevel: api.LogLevelSilent,
		})
		if len(res.Errors) == 0 {
			m := gz(res.OutputFiles[0].Contents)
			ext = fmt.Sprintf("MCP Apps app client %s B", thousands(m))
			ratio = fmt.Sprintf("1/%.0f", float64(m)/float64(mcp))
		} else {
			notes = append(notes, "bundling @modelcontextprotocol/ext-apps failed: "+res.Errors[0].Text)
		}
	}
	add(row{"runtime, MCP flavour, full (`dist/snug-mcp.js` as injected, min+gzip)", fmt.Sprintf("%d B", mcp), ext, ratio, "≤ 4,096 B", verdict(mcp <= 4096), ""})
	// The issue's goals for an app's runtime hold for both targets.
	for _, a := range []struct {
		name    string
		members []string
		goal    int
	}{{"runtime, MCP flavour, ask-only app", []string{"ask"}, 2400}, {"runtime, MCP flavour, ask + db + forms app", []string{"ask", "db", "forms"}, 3000}} {
		rt, _ := runtimejs.Shaken("mcp", func(m string) bool { return slices.Contains(a.members, m) })
		n := gz(rt)
		add(row{a.name + " (tree-shaken, min+gzip)", fmt.Sprintf("%d B", n), fmt.Sprintf("full %d B", mcp), fmt.Sprintf("%.2f", float64(n)/float64(mcp)), fmt.Sprintf("≤ %s B", thousands(a.goal)), verdict(n <= a.goal), ""})
	}
}

// instructionRows counts the instructions (valgrind's callgrind, which
// counts the same whatever else the machine does) of a build against
// esbuild's, and the build's floor (the libraries' start), when valgrind is
// installed: the ratios a loaded machine cannot spoil. Kernel time (exec, page faults) is not counted.
func instructionRows(root, cache string, npmOK bool) {
	if _, err := exec.LookPath("valgrind"); err != nil || !npmOK {
		notes = append(notes, "valgrind or the npm esbuild is missing: the instruction-count rows are skipped")
		return
	}
	progress("instruction counts (valgrind --tool=callgrind) ...")
	count := func(name string, args ...string) float64 {
		cmd := exec.Command("valgrind", append([]string{"--tool=callgrind", "--callgrind-out-file=/dev/null", name}, args...)...)
		cmd.Dir = root
		// Go's asynchronous preemption signals trip callgrind.
		cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=1")
		out, _ := cmd.CombinedOutput()
		m := regexp.MustCompile(`Collected : (\d+)`).FindSubmatch(out)
		if m == nil {
			return 0
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	bin := filepath.Join(cache, "snuggen")
	esb := nativeEsbuild(cache)
	if _, err := os.Stat(esb); err != nil {
		notes = append(notes, "the native esbuild binary is not where npm puts it ("+esb+"): the instruction-count rows are skipped")
		return
	}
	out, _ := os.MkdirTemp("", "bench-all-")
	defer os.RemoveAll(out)
	app := filepath.Join(root, "bench", "build-app")
	sb := count(bin, "build", filepath.Join(app, "index.html"), "-o", filepath.Join(out, "s.html"))
	eb := count(esb, filepath.Join(app, "src", "main.js"), filepath.Join(app, "style.css"), "--bundle", "--minify", "--format=esm", "--loader:.svg=dataurl", "--outdir="+filepath.Join(out, "e"), "--log-level=warning")
	ev, fl := count(esb, "--version"), 0.0
	if floor, err := floorBinary(root, cache); err == nil {
		fl = count(floor)
	} else {
		notes = append(notes, "the floor binary did not build, the build's floor row is skipped: "+err.Error())
	}
	if sb > 0 && eb > 0 {
		add(row{"build, per process (instructions, callgrind)", fmt.Sprintf("%.1fM", sb/1e6), fmt.Sprintf("bare esbuild CLI %.1fM", eb/1e6), fmt.Sprintf("%.2f×", sb/eb), "≤ 1.25×", verdict(sb/eb <= 1.25), ""})
	}
	if sb > 0 && eb > 0 && ev > 0 && fl > 0 {
		// The build's floor: esbuild's own build plus what starting a
		// process with snuggen's libraries costs over esbuild's start.
		f := eb + fl - ev
		add(row{"floor: bare esbuild's build + the libraries' init over esbuild's start (instructions)", fmt.Sprintf("build %.1fM", sb/1e6), fmt.Sprintf("%.1f + %.1f − %.1f = %.1fM", eb/1e6, fl/1e6, ev/1e6, f/1e6), fmt.Sprintf("%.2f×", sb/f), "", "", ""})
	}
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func printTable() {
	fmt.Println("| path | snuggen | anchor or floor | ratio | goal | met | load |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", r.path, r.ours, r.anchor, r.ratio, r.goal, r.met, r.load)
	}
	for _, n := range notes {
		fmt.Println("\nnote:", n)
	}
}
