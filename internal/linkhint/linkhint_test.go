package linkhint

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"golang.org/x/net/html"

	"github.com/snuggen/snuggen/internal/browsertest"
)

func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }

// differential is one document where a token scan and the browser's parser
// can disagree about whether a <link> exists. Each case's hrefs are
// https://hN.example/ so hints are told apart by href; want lists the
// hrefs Find must report.
type differential struct {
	name string
	doc  string
	want []string
}

var differentials = []differential{
	{"plain", `<link rel=preconnect href="https://h1.example/">`, []string{"https://h1.example/"}},
	{"svg style breakout (issue 11)", `<svg><style><p></p><link rel=preconnect href="https://h1.example/"></style></svg>`, []string{"https://h1.example/"}},
	{"svg style breakout in body", `<!doctype html><body><svg><style><p></p><link rel=dns-prefetch href="https://h1.example/"></style></svg>`, []string{"https://h1.example/"}},
	{"svg breakout by font color", `<svg><font color=red><link rel=prefetch href="https://h1.example/">`, []string{"https://h1.example/"}},
	{"svg foreignObject", `<svg><foreignObject><link rel=preconnect href="https://h1.example/"></foreignObject></svg>`, []string{"https://h1.example/"}},
	{"svg desc", `<p><svg><desc><link rel=preconnect href="https://h1.example/"></desc></svg>`, []string{"https://h1.example/"}},
	{"svg link stays svg", `<svg><link rel=preconnect href="https://h1.example/"></svg>`, []string{"https://h1.example/"}},
	{"math mi", `<math><mi><link rel=preconnect href="https://h1.example/"></mi></math>`, []string{"https://h1.example/"}},
	{"math annotation-xml html", `<math><annotation-xml encoding="text/html"><link rel=preload href="https://h1.example/"></annotation-xml></math>`, []string{"https://h1.example/"}},
	{"math style", `<math><style><p></p><link rel=preconnect href="https://h1.example/"></style></math>`, []string{"https://h1.example/"}},
	{"template", `<template><div><link rel=prefetch href="https://h1.example/"></div></template>`, []string{"https://h1.example/"}},
	{"nested template", `<template><template><link rel=prerender href="https://h1.example/"></template></template>`, []string{"https://h1.example/"}},
	{"noscript", `<noscript><link rel=preconnect href="https://h1.example/"></noscript>`, []string{"https://h1.example/"}},
	{"noscript in head", `<head><noscript><link rel=dns-prefetch href="https://h1.example/"></noscript></head>`, []string{"https://h1.example/"}},
	{"mixed case", `<LINK REL="PreConnect" HREF="https://h1.example/">`, []string{"https://h1.example/"}},
	{"rel odd whitespace", "<link rel=\"\tstylesheet\fpreconnect\r\n\" href=\"https://h1.example/\">", []string{"https://h1.example/"}},
	{"rel entity", `<link rel="pre&#99;onnect" href="https://h1.example/">`, []string{"https://h1.example/"}},
	{"rel modulepreload", `<link rel=modulepreload href="https://h1.example/">`, []string{"https://h1.example/"}},
	{"slash separators", `<link/rel="preconnect"/href="https://h1.example/"/>`, []string{"https://h1.example/"}},
	{"duplicate rel: the first wins", `<link rel=preconnect rel=stylesheet href="https://h1.example/"><link rel=stylesheet rel=preconnect href="https://h2.example/">`, []string{"https://h1.example/"}},
	{"in table", `<table><link rel=preconnect href="https://h1.example/"><tr><td>x</td></tr></table>`, []string{"https://h1.example/"}},
	{"in select", `<select><link rel=preconnect href="https://h1.example/"><option>x</select>`, []string{"https://h1.example/"}},
	{"after html", `<html><body></body></html><link rel=preconnect href="https://h1.example/">`, []string{"https://h1.example/"}},
	{"in frameset-free head after body", `<body>x</body><head><link rel=preconnect href="https://h1.example/">`, []string{"https://h1.example/"}},
	{"srcdoc", `<iframe srcdoc="<link rel=preconnect href=https://h1.example/>"></iframe>`, []string{"https://h1.example/"}},
	{"srcdoc in srcdoc", `<iframe srcdoc="<iframe srcdoc='&amp;lt;link rel=preconnect href=https://h1.example/&amp;gt;'></iframe>"></iframe>`, []string{"https://h1.example/"}},
	{"srcdoc svg breakout", `<iframe srcdoc="<svg><style><p></p><link rel=preconnect href=https://h1.example/>"></iframe>`, []string{"https://h1.example/"}},
	{"meta http-equiv link", `<meta http-equiv="Link" content="<https://h1.example/>; rel=preconnect">`, []string{"<https://h1.example/>; rel=preconnect"}},
	{"hidden after a tag joined by a strip", `<<link rel=preconnect href="https://h1.example/">link rel=preconnect href="https://h2.example/">`, []string{"https://h1.example/"}},

	// Text in the parser's view: no element, in Find or in the browser.
	{"title", `<title><link rel=preconnect href="https://h1.example/"></title>`, nil},
	{"textarea", `<textarea><link rel=preconnect href="https://h1.example/"></textarea>`, nil},
	{"html style", `<style><link rel=preconnect href="https://h1.example/"></style>`, nil},
	{"script", `<script>"<link rel=preconnect href=https://h1.example/>"</script>`, nil},
	{"comment", `<!-- <link rel=preconnect href="https://h1.example/"> -->`, nil},
	{"attribute value", `<div title="<link rel=preconnect href=https://h1.example/>"></div><div title=<link rel=x>`, nil},
	{"svg cdata", `<svg><![CDATA[<link rel=preconnect href="https://h1.example/">]]></svg>`, nil},
	{"svg style entity", `<svg><style>&lt;link rel=preconnect href=https://h1.example/&gt;</style></svg>`, nil},
	{"xmp", `<xmp><link rel=preconnect href="https://h1.example/"></xmp>`, nil},
	{"plaintext", `<plaintext><link rel=preconnect href="https://h1.example/">`, nil},
	{"not a hint", `<link rel="stylesheet preconnected" href="https://h1.example/"><link rel=icon href="https://h2.example/">`, nil},
	{"nbsp is not whitespace", "<link rel=\"preconnect\u00a0\" href=\"https://h1.example/\">", nil},
}

func hrefs(hs []Hint) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Href)
	}
	return out
}

// TestFindSeesWhatTheParserBuilds: Find reports each hint where the HTML
// parser puts it, with the byte range of its start tag.
func TestFindSeesWhatTheParserBuilds(t *testing.T) {
	for _, c := range differentials {
		t.Run(c.name, func(t *testing.T) {
			hs := Find([]byte(c.doc))
			if got := hrefs(hs); !slices.Equal(got, c.want) {
				t.Fatalf("Find = %q, want %q", got, c.want)
			}
			for _, h := range hs {
				if h.Start < 0 || h.End <= h.Start || h.End > len(c.doc) {
					t.Fatalf("hint %s has no place: %d..%d", h, h.Start, h.End)
				}
				tag := strings.ToLower(c.doc[h.Start:h.End])
				want := "<" + h.Tag
				if h.InSrcdoc {
					want = "<iframe"
				}
				if !strings.HasPrefix(tag, want) || !strings.HasSuffix(tag, ">") {
					t.Errorf("place %d..%d is %q, want a %s start tag", h.Start, h.End, tag, want)
				}
			}
		})
	}
}

// TestFindParsedIsFind: given html.Parse's tree of the document, FindParsed
// reports exactly what Find does, places included, on every case.
func TestFindParsedIsFind(t *testing.T) {
	for _, c := range differentials {
		root, err := html.Parse(strings.NewReader(c.doc))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := FindParsed([]byte(c.doc), root), Find([]byte(c.doc)); !slices.Equal(got, want) {
			t.Errorf("%s: FindParsed = %+v, Find = %+v", c.name, got, want)
		}
	}
}

// TestFindAgreesWithChromium loads every case in headless Chromium and
// collects the hint links its parser built (document, template contents,
// srcdoc frames): each must be one Find reports, and Find reports no more
// than Chromium builds except in <noscript>.
func TestFindAgreesWithChromium(t *testing.T) {
	pages := map[string]string{}
	for i, c := range differentials {
		pages[fmt.Sprintf("/c%d", i)] = c.doc
	}
	base := browsertest.ServePages(t, pages)
	ctx := browsertest.NewTab(t)
	const collect = `(async () => {
	  const blocked = ["preconnect","dns-prefetch","prefetch","prerender","preload","modulepreload"];
	  const out = [];
	  const seen = new Set();
	  const walk = async (root) => {
	    for (const el of root.querySelectorAll("*")) {
	      if (el.localName === "template" && el.content) await walk(el.content);
	      if (el.localName === "iframe") {
	        if (el.contentDocument?.readyState !== "complete") await new Promise(r => el.addEventListener("load", r, {once: true}));
	        if (el.contentDocument && !seen.has(el.contentDocument)) { seen.add(el.contentDocument); await walk(el.contentDocument); }
	      }
	      if (el.localName === "link") {
	        const toks = (el.getAttribute("rel") || "").toLowerCase().split(/[\t\n\f\r ]+/);
	        if (toks.some(t => blocked.includes(t))) out.push(el.getAttribute("href"));
	      }
	      if (el.localName === "meta" && (el.getAttribute("http-equiv") || "").trim().toLowerCase() === "link") out.push(el.getAttribute("content"));
	    }
	  };
	  await walk(document);
	  return out;
	})()`
	for i, c := range differentials {
		browsertest.Do(t, ctx, "open "+c.name, chromedp.Navigate(fmt.Sprintf("%s/c%d", base, i)))
		got := browsertest.Eval[[]string](t, ctx, collect)
		found := hrefs(Find([]byte(c.doc)))
		for _, h := range got {
			if !slices.Contains(found, h) {
				t.Errorf("%s: Chromium built a hint link to %q that Find does not report (Find: %q)", c.name, h, found)
			}
		}
		// The other way round, Chromium builds every hint the case names
		// (so each differential is real and the collector sees it), except
		// inside <noscript>, which Find reports as if scripting were off.
		if !strings.Contains(c.name, "noscript") && !slices.Equal(got, c.want) {
			t.Errorf("%s: Chromium built hint links %q, the case expects %q", c.name, got, c.want)
		}
	}
}

// TestStripRemovesEveryHint: what Strip leaves has no hint in Find's view,
// even where removing one tag joins text into a new one, and keeps the rest
// of the document.
func TestStripRemovesEveryHint(t *testing.T) {
	for _, c := range differentials {
		t.Run(c.name, func(t *testing.T) {
			out, err := Strip([]byte(c.doc))
			if err != nil {
				t.Fatal(err)
			}
			if hs := Find(out); len(hs) > 0 {
				t.Fatalf("Strip left %v in %q", hrefs(hs), out)
			}
			if len(c.want) == 0 && !bytes.Equal(out, []byte(c.doc)) {
				t.Errorf("Strip changed a document without hints: %q", out)
			}
		})
	}
	out, err := Strip([]byte(`<p>a</p><link rel=preconnect href="https://h1.example/"><p>b</p>`))
	if err != nil || string(out) != `<p>a</p><p>b</p>` {
		t.Errorf("Strip = %q, %v", out, err)
	}
}

func TestBlockedRel(t *testing.T) {
	for rel, want := range map[string]string{
		"preconnect": "preconnect", "STYLESHEET DNS-Prefetch": "dns-prefetch", "icon": "", "": "",
		"pre connect": "", "modulepreload": "modulepreload", "\fprefetch\t": "prefetch",
	} {
		got, ok := BlockedRel(rel)
		if got != want || ok != (want != "") {
			t.Errorf("BlockedRel(%q) = %q, %v; want %q", rel, got, ok, want)
		}
	}
}

func BenchmarkFindNoHint(b *testing.B) {
	doc := bytes.Repeat([]byte(`<div class="card"><p>Some text &amp; more</p><img src="data:," alt=""></div>`), 2000)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		Find(doc)
	}
}

func BenchmarkFindWithLinks(b *testing.B) {
	doc := bytes.Repeat([]byte(`<div class="card"><link rel=stylesheet href="a.css"><meta name=x content=y><p>Some text</p></div>`), 2000)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		Find(doc)
	}
}
