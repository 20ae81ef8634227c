package server

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/snuggen/snuggen/frame"
)

func TestPrepareDocumentPlacesPreludeFirst(t *testing.T) {
	for _, tc := range []struct{ name, in, wantPrefix string }{
		{"doctype", "<!doctype html><html><head><script>app()</script>", "<!doctype html>" + string(Prelude) + "<html>"},
		{"whitespace and doctype", "\n  <!DOCTYPE html>\n<p>x", "\n  <!DOCTYPE html>" + string(Prelude) + "\n<p>x"},
		{"bom", "\xef\xbb\xbf<!doctype html><p>x", "<!doctype html>" + string(Prelude)},
		{"no doctype", "<script>app()</script>", string(Prelude) + "<script>app()</script>"},
		{"comment first", "<!-- hi --><!doctype html><script>x</script>", string(Prelude) + "<!-- hi -->"},
		{"empty", "", string(Prelude)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := PrepareDocument([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(out), tc.wantPrefix) {
				t.Fatalf("got %q, want prefix %q", out, tc.wantPrefix)
			}
			if bytes.Count(out, Prelude) != 1 {
				t.Fatalf("prelude appears %d times", bytes.Count(out, Prelude))
			}
		})
	}
}

// The prelude is the first script the parser meets, whatever the app puts
// before its own scripts.
func TestPreludeIsTheFirstScript(t *testing.T) {
	out, err := PrepareDocument([]byte(`<!doctype html><html><head><meta charset="utf-8"><script>first()</script></head><body><script>second()</script>`))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var scripts []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "script" && n.FirstChild != nil {
			scripts = append(scripts, n.FirstChild.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if len(scripts) != 3 || !strings.Contains(scripts[0], "delete window.RTCPeerConnection") {
		t.Fatalf("scripts in order: %q", scripts)
	}
	for _, name := range frame.RemovedGlobals {
		if !strings.Contains(scripts[0], "delete window."+name+";") {
			t.Errorf("prelude does not delete %s", name)
		}
	}
}

func TestPrepareDocumentStripsResourceHints(t *testing.T) {
	in := `<!doctype html><head>
<link rel="preconnect" href="https://a.example">
<LINK REL="DNS-Prefetch" href="//b.example">
<link rel="stylesheet prefetch" href="https://c.example/x.css">
<link rel=prerender href=https://d.example/>
<link rel="preload" as="font" href="https://e.example/f.woff2" crossorigin/>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="https://cdn.jsdelivr.net/x.css">
<script>const s = '<link rel="preconnect" href="https://in-a-string.example">';</script>
</head><body><p>text mentioning <link rel=preconnect> is a tag</p>`
	out, err := PrepareDocument([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, gone := range []string{"a.example", "b.example", "c.example", "d.example", "e.example", "<link rel=preconnect>"} {
		if strings.Contains(got, gone) && !strings.Contains(gone, "in-a-string") {
			t.Errorf("%s survived:\n%s", gone, got)
		}
	}
	for _, kept := range []string{`<link rel="icon" href="data:,">`, `<link rel="stylesheet" href="https://cdn.jsdelivr.net/x.css">`, "in-a-string.example"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%s was removed:\n%s", kept, got)
		}
	}
}

func TestAppCSPCarriesTheSandbox(t *testing.T) {
	csp := AppCSP("http://127.0.0.1:7878")
	if !strings.HasPrefix(csp, frame.CSPString(frame.SandboxCSP)) {
		t.Errorf("CSP %q does not start with the rules' policy", csp)
	}
	for _, want := range []string{"; sandbox allow-scripts", "; frame-ancestors http://127.0.0.1:7878", "connect-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if !strings.Contains(AppCSP(""), "frame-ancestors 'none'") {
		t.Error("without a runner origin, nobody may frame the app")
	}
}

// BenchmarkPrepareDocument reports the cost of preparing a document against
// a baseline in the same run: one plain tokenizer pass copying every token
// (the least any HTML-aware rewrite does).
func BenchmarkPrepareDocument(b *testing.B) {
	doc := bytes.Repeat([]byte(`<div class="row"><span>item</span><link rel="stylesheet" href="x.css"><script>var a = "<b>";</script></div>`), 2000)
	doc = append([]byte("<!doctype html><html><head></head><body>"), doc...)
	b.Run("baseline-tokenize", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			var out bytes.Buffer
			z := html.NewTokenizer(bytes.NewReader(doc))
			for z.Next() != html.ErrorToken {
				out.Write(z.Raw())
			}
		}
	})
	b.Run("prepare", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		for b.Loop() {
			if _, err := PrepareDocument(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
