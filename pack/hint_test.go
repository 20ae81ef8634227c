package pack

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusesHintsTheParserBuilds: a resource hint is refused wherever the
// browser's HTML parser builds it, including where a token scan sees text
// (the parser differentials of issue 11 item 5), with its place in the
// page; nothing of it reaches an output.
func TestRefusesHintsTheParserBuilds(t *testing.T) {
	cases := map[string]string{
		"svg style breakout":       `<svg><style><p></p><link rel=preconnect href="https://h.example/"></style></svg>`,
		"svg style breakout local": `<svg><style><p></p><link rel=prefetch href="next.html"></style></svg>`,
		"svg style css string":     `<svg><style>.a{content:"<p></p><link rel=dns-prefetch href=https://h.example/>"}</style></svg>`,
		"svg font breakout":        `<svg><font size=4><link rel=preload href="https://h.example/f.woff2" as=font></svg>`,
		"svg foreignObject":        `<svg><foreignObject><link rel=preconnect href="https://h.example/"></foreignObject></svg>`,
		"svg link":                 `<svg><link rel=preconnect href="https://h.example/"></svg>`,
		"math mi":                  `<math><mi><link rel=dns-prefetch href="https://h.example/"></mi></math>`,
		"math style breakout":      `<math><style><p></p><link rel=preconnect href="https://h.example/"></style></math>`,
		"template":                 `<template><div><link rel=prefetch href="https://h.example/"></div></template>`,
		"noscript":                 `<noscript><link rel=preconnect href="https://h.example/"></noscript>`,
		"mixed case":               `<LINK REL="PreConnect" HREF="https://h.example/">`,
		"odd whitespace":           "<link rel=\"\tstylesheet\fpreconnect\r\" href=\"https://h.example/\">",
		"entity in rel":            `<link rel="pre&#99;onnect" href="https://h.example/">`,
		"modulepreload":            `<link rel=modulepreload href="https://h.example/m.js">`,
		"prerender":                `<link rel=prerender href="https://h.example/">`,
		"srcdoc":                   `<iframe srcdoc="<link rel=preconnect href=https://h.example/>"></iframe>`,
		"meta http-equiv link":     `<meta http-equiv="Link" content="<https://h.example/>; rel=preconnect">`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			page := confineHead + body + "\n</body></html>"
			res, err := Build(context.Background(), Options{Path: "app.html", HTML: []byte(page), Runtime: []byte(testRuntime)})
			if res == nil {
				t.Fatalf("Build: %v", err)
			}
			if res.HTML != nil {
				t.Fatalf("built a page with a hint:\n%s", clip(res.HTML))
			}
			for _, d := range res.Diagnostics {
				if d.Code == "html.resource-hint" && d.Severity == SeverityError {
					if d.Line != 2 || d.Column < 1 || d.File != "app.html" {
						t.Errorf("hint reported at %s:%d:%d, want app.html:2", d.File, d.Line, d.Column)
					}
					return
				}
			}
			t.Errorf("no html.resource-hint error:\n%s", diagText(res.Diagnostics))
		})
	}
}

// TestHintInsideInlinedCSS: a stylesheet the build inlines into <svg> (a
// <link rel=stylesheet> there) is markup to the parser; the check on the
// output stops a hint it carries.
func TestHintInsideInlinedCSS(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"index.html": confineHead + `<svg><link rel="stylesheet" href="s.css"></svg></body></html>`,
		"s.css":      `.a{content:"<p></p><link rel=preconnect href=https://h.example/>"}`,
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Build(context.Background(), Options{Path: filepath.Join(dir, "index.html"), Runtime: []byte(testRuntime)})
	if err == nil || res.HTML != nil {
		t.Fatalf("built:\n%s", clip(res.HTML))
	}
	if !strings.Contains(diagText(res.Diagnostics), "rel=preconnect") {
		t.Errorf("the error does not name the hint:\n%s", diagText(res.Diagnostics))
	}
}

// TestLocalHintIsDropped: a hint for a local file (inlined anyway) is
// dropped quietly, as before; the output holds no hint.
func TestLocalHintIsDropped(t *testing.T) {
	page := confineHead + `<link rel="preload" href="font.woff2" as="font"><link rel=modulepreload href="./m.js"><p>x</p></body></html>`
	res, err := Build(context.Background(), Options{Path: "app.html", HTML: []byte(page), Runtime: []byte(testRuntime)})
	if err != nil {
		t.Fatalf("%v\n%s", err, diagText(res.Diagnostics))
	}
	if strings.Contains(string(res.HTML), "preload") {
		t.Errorf("a local hint reached the output:\n%s", res.HTML)
	}
}
