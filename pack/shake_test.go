package pack

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

// TestFindSnugUse: the members an app names are found in the forms a model
// writes them, and every use the build cannot follow asks for the whole
// runtime.
func TestFindSnugUse(t *testing.T) {
	for _, c := range []struct {
		code    string
		members []string // the capability members found
		dynamic bool
	}{
		{`snug.ask("x",{a:1}).then(r=>o.textContent=r.text)`, []string{"ask"}, false},
		{`await snug.db.exec("create table t(x)");snug.db.get("k")`, []string{"db"}, false},
		{`snug?.net.fetch(u);globalThis.snug.openUrl(u)`, []string{"net", "openUrl"}, false},
		{`await snug.saveFile("notes.md",text)`, []string{"saveFile"}, false},
		// An <a download> (markup or property) goes to saveFile through the
		// link routing (openUrl's); ask's onPartial option needs its reader.
		{`<a download="x.csv" href="#">`, []string{"openUrl", "saveFile"}, false},
		{`a.href=URL.createObjectURL(b);a.download="x.csv";a.click()`, []string{"openUrl", "saveFile"}, false},
		{`snug.ask("q",{},{schema:s,onPartial:p=>show(p)})`, []string{"ask", "onPartial"}, false},
		{`window.snug.ask(1);self.snug.db.set("a",1)`, []string{"ask", "db"}, false},
		{`const{ask:e,db:t}=snug;e(1)`, []string{"ask", "db"}, false},
		{`const { ask, db: { exec } } = snug;`, []string{"ask", "db"}, false},
		{`let{"saveFile":o}=globalThis.snug;`, []string{"saveFile"}, false},
		{`n=()=>globalThis.snug?snug.db.set("h",t):0`, []string{"db"}, false},
		{`if(typeof snug<"u")snug.ask(1);if(!snug)throw 0;snug&&snug.net.fetch(1)`, []string{"ask", "net"}, false},
		{`snug.on("theme-change",f);await snug.ready;snug.emit("x",{})`, nil, false},
		{`<meta name="snug:app-id" content="a"><p>Made with snug.</p><p>snug apps</p>`, nil, false},
		{`x={snug:1,b:2};snug.ask("explain",{word:"snug"})`, []string{"ask"}, false},
		{`c.fillStyle=css.getPropertyValue("--snug-accent");o.strokeStyle=d("--snug-border","--line")`, nil, false},
		// Dynamic: any member may be reached.
		{`snug[k]()`, nil, true},
		{`f(snug)`, nil, true},
		{`const s=snug;s.ask()`, nil, true},
		{`const{...rest}=snug`, nil, true},
		{`const{[k]:v}=snug`, nil, true},
		{`globalThis["snug"].ask()`, nil, true},
		{`x=[snug]`, nil, true},
		{`o={s:snug}`, nil, true},
		{`a?snug:b`, nil, true},
		{`g.snug.db.get(1)`, nil, true},
		{`x=snug||y`, nil, true},
	} {
		u := findSnugUse([]string{c.code})
		var got []string
		for _, m := range []string{"ask", "db", "net", "openUrl", "saveFile", "onPartial"} {
			if u.members[m] {
				got = append(got, m)
			}
		}
		if (u.dynamic != "") != c.dynamic {
			t.Errorf("%s: dynamic = %q, want dynamic %v", c.code, u.dynamic, c.dynamic)
		}
		if !c.dynamic && !slices.Equal(got, c.members) {
			t.Errorf("%s: members %v, want %v", c.code, got, c.members)
		}
		if u.dynamic != "" && !strings.Contains(u.dynamic, "snug") {
			t.Errorf("%s: the reason %q does not quote the use", c.code, u.dynamic)
		}
	}
}

// TestLinkRoutingRule: an app that may show or follow a link gets the link
// routing (links.js, with openUrl) whatever its code names: links in
// markup, agent-written Markdown or HTML through an HTML-string sink, links
// made in script, window.open and navigations; an app with none of them
// does not pay for it.
func TestLinkRoutingRule(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{`<p>See <a href="https://example.com">the docs</a></p>`, true},
		{`<A HREF=https://example.com>x</A>`, true},
		{`<map><area shape=rect href="https://example.com"></map>`, true},
		{`out.innerHTML = marked.parse(await snug.ask("explain", {}))`, true},
		{`el.insertAdjacentHTML("beforeend", md(r.text))`, true},
		{`box.outerHTML = html`, true},
		{`document.write(s)`, true},
		{`new DOMParser().parseFromString(s, "text/html")`, true},
		{`r.createContextualFragment(s)`, true},
		{`el.setHTMLUnsafe(s)`, true},
		{`f.srcdoc = s`, true},
		{`const a = document.createElement("a"); a.textContent = "x"`, true},
		{`const a = document.createElement(tag)`, true},
		{`window.open("https://example.com")`, true},
		{`location.assign("/x")`, true},
		{`<button onclick="snug.ask('go', {})">Go</button><div id="o"></div>` +
			`<script>o.textContent = "hi"; document.createElement("div")</script>`, false},
		{`const el = document.querySelector("#out"); el.textContent = r.data.text`, false},
	} {
		if got := mayLink(c.text); got != c.want {
			t.Errorf("mayLink(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestMarkdownAppGetsLinkRouting: an app that renders the agent's Markdown
// (links and all) through innerHTML and names only snug.ask is built with
// the link routing and openUrl; the same app writing text only is not.
func TestMarkdownAppGetsLinkRouting(t *testing.T) {
	build := func(script string) string {
		t.Helper()
		res, err := Build(context.Background(), Options{Path: "index.html", HTML: []byte(`<!doctype html><title>md</title><div id="out"></div>` +
			`<script>` + script + `</script>`)})
		if err != nil {
			t.Fatalf("build: %v %v", err, res.Diagnostics)
		}
		return string(res.HTML)
	}
	md := build(`const md = (s) => s.replace(/\[([^\]]+)\]\((https?:[^)]+)\)/g, '<a href="$2">$1</a>');
snug.ask("explain", {}).then((r) => { out.innerHTML = md(r.text); });`)
	for _, s := range []string{`"snug:open-url-request"`, "not following"} {
		if !strings.Contains(md, s) {
			t.Errorf("the Markdown app's runtime lacks %s: its links would replace the app", s)
		}
	}
	text := build(`snug.ask("explain", {}).then((r) => { out.textContent = r.text; });`)
	if strings.Contains(text, `"snug:open-url-request"`) || strings.Contains(text, "not following") {
		t.Error("an app that shows no link got the link routing")
	}
}

// linkWordRegexp is the reading mayLink implements, as one regexp: the
// reference TestMayLinkIsTheRegexp holds mayLink to.
var linkWordRegexp = regexp.MustCompile(`(?i)<(a|area)[\s/>]|href|innerhtml|outerhtml|insertadjacenthtml|\bwrite(ln)?\s*\(|domparser|createcontextualfragment|htmlunsafe|srcdoc|createelement(ns)?\s*\(\s*([^"'\x60\s]|["'\x60](a|area)["'\x60])|\bopen\s*\(|location|download`)

// TestMayLinkIsTheRegexp: mayLink answers as the regexp does, on the example
// apps, the runtime's sources and every window of them, and on hand-made
// edge cases (the regexp's case folding of ſ and the Kelvin sign aside).
func TestMayLinkIsTheRegexp(t *testing.T) {
	texts := []string{
		"<a>", "<A\t", "<area/", "<ab", "<aREA >", "x.write (", "rewrite(", "writeln\n(", "_open(", "open", "reopen (x)",
		"createElement('a')", "createElement( `area` )", "createElementNS(x", "createElement(\"abbr\")", "createElement(",
		"createelement ( \"A\" )", "createElement('ar')", "HREF", "Location", "innerHTML", "setHTMLUnsafe", "DOWNLOAD",
	}
	var files []string
	for _, pattern := range []string{"../examples/*/*.html", "../examples/*.html", "../runtime-js/src/*.js", "testdata/*/*.html"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	if len(files) < 5 {
		t.Fatalf("found %d files to read; run from the pack directory", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		texts = append(texts, s)
		for i := 0; i+40 <= len(s); i += 7 {
			texts = append(texts, s[i:i+40])
		}
	}
	for _, s := range texts {
		if strings.ContainsAny(s, "\u017f\u212a") {
			continue
		}
		if got, want := mayLink(s), linkWordRegexp.MatchString(s); got != want {
			t.Errorf("mayLink(%q) = %v, the regexp says %v", s, got, want)
		}
	}
}

// BenchmarkMayLink: mayLink against the regexp it replaced, on the
// runtime's sources without their link words (the worst case: read to the end).
func BenchmarkMayLink(b *testing.B) {
	var sb strings.Builder
	m, _ := filepath.Glob("../runtime-js/src/*.js")
	for _, f := range m {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if !linkWordRegexp.MatchString(line) {
				sb.WriteString(line + "\n")
			}
		}
	}
	text := sb.String()
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			mayLink(text)
		}
	})
	b.Run("regexp", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			linkWordRegexp.MatchString(text)
		}
	})
}

// TestFormRule: mayForm keeps the runtime's forms for a page that may put a
// form on the page or submit one, and drops them for one that cannot.
func TestFormRule(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool
	}{
		{`<form id="f"><input name="q"><button>Ask</button></form>`, true},
		{`<FORM action="/x">`, true},
		{"el.innerHTML = `<form><input></form>`", true},
		{`const f = document.createElement("form")`, true},
		{`h("form", { onSubmit }, h("input"))`, true},
		{`const el = document.createElement(tag)`, true},
		{`btn.form.requestSubmit()`, true},
		{`document.forms[0]`, true},
		{`x.requestSubmit()`, true},
		{`out.innerHTML = marked.parse(text)`, true},
		{`document.write(s)`, true},
		{`new DOMParser().parseFromString(s, "text/html")`, true},
		{`<script src="https://cdn.jsdelivr.net/npm/alpinejs"></script>`, true},
		{`<script src=//unpkg.com/x></script>`, true},
		{`import { h, render } from "https://unpkg.com/preact?module"`, true},
		{`const m = await import("https://cdn.jsdelivr.net/npm/x")`, true},
		{`<script type="importmap">{"imports": {}}</script>`, true},
		{`<button onclick="snug.ask('go', {})">Go</button><div id="o"></div>` +
			`<script>o.textContent = "hi"; document.createElement("div")</script>`, false},
		{`.card { transform: scale(1.1) } /* platform, uniform, information */`, false},
		{`const s = new Intl.NumberFormat("en").format(n); el.textContent = s`, false},
		{`<input id="q"><button id="go">Ask</button><img src="icon.png">`, false},
		{`import { x } from "./lib.js"`, false},
	} {
		if got := mayForm(c.text); got != c.want {
			t.Errorf("mayForm(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestFormAppGetsTheForms: an app with a <form> that names only snug.ask is
// built with the runtime's forms before its runtime; the same app with an
// input and a button and no form is not, and pays that much less.
func TestFormAppGetsTheForms(t *testing.T) {
	build := func(body string) string {
		t.Helper()
		res, err := Build(context.Background(), Options{Path: "index.html", HTML: []byte(`<!doctype html><title>ask</title>` + body +
			`<div id="out"></div><script>go.onclick = async () => { out.textContent = (await snug.ask("q", { q: q.value })).text; };</script>`)})
		if err != nil {
			t.Fatalf("build: %v %v", err, res.Diagnostics)
		}
		return string(res.HTML)
	}
	forms := string(runtimejs.Injected(runtimejs.Forms))
	askOnly, _ := runtimejs.Shaken("snug", func(m string) bool { return m == "ask" })
	withForm := build(`<form><input id="q"><button id="go">Ask</button></form>`)
	if !strings.Contains(withForm, forms+"\n"+string(askOnly)) {
		t.Error("an app with a <form> did not get the forms before its ask-only runtime")
	}
	noForm := build(`<input id="q"><button id="go">Ask</button>`)
	if strings.Contains(noForm, forms) || strings.Contains(noForm, "requestSubmit") || !strings.Contains(noForm, string(askOnly)) {
		t.Error("an app without a form did not get the ask-only runtime alone")
	}
}
