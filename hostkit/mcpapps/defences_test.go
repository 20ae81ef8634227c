package mcpapps_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/mcpapps"
	"github.com/snuggen/snuggen/hostkit/server"
	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

// checkDefences parses doc as the browser will and checks that it carries
// the host's defences an MCP Apps host cannot add: <meta charset>, then the
// Trusted Types policy (server.HostCSPMeta) in a CSP meta, then the prelude
// as the first script; the build's own sandbox CSP meta with connect-src
// 'none'; and no nested browsing context element or srcdoc attribute.
func checkDefences(t *testing.T, name string, doc []byte) {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var els []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			els = append(els, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	attr := func(n *html.Node, key string) (string, bool) {
		for _, a := range n.Attr {
			if a.Key == key {
				return a.Val, true
			}
		}
		return "", false
	}
	var head []*html.Node
	var policies []string
	var firstScript *html.Node
	for _, e := range els {
		if e.Parent != nil && e.Parent.DataAtom == atom.Head {
			head = append(head, e)
		}
		if e.DataAtom == atom.Script && firstScript == nil {
			firstScript = e
		}
		if v, _ := attr(e, "http-equiv"); strings.EqualFold(v, "Content-Security-Policy") {
			c, _ := attr(e, "content")
			policies = append(policies, c)
		}
		for _, n := range frame.NestedContextElements {
			if e.Data == n {
				t.Errorf("%s: a <%s> is left in the markup", name, n)
			}
		}
		if _, ok := attr(e, "srcdoc"); ok {
			t.Errorf("%s: a srcdoc attribute is left on <%s>", name, e.Data)
		}
	}
	if len(head) < 3 {
		t.Fatalf("%s: head has %d elements", name, len(head))
	}
	if _, ok := attr(head[0], "charset"); !ok || head[0].DataAtom != atom.Meta {
		t.Errorf("%s: the head does not start with <meta charset>", name)
	}
	if c, _ := attr(head[1], "content"); head[1].DataAtom != atom.Meta || c != server.HostCSPMeta() {
		t.Errorf("%s: the second head element is %s %v, want the Trusted Types policy %q", name, head[1].Data, head[1].Attr, server.HostCSPMeta())
	}
	if head[2] != firstScript || firstScript.FirstChild == nil || firstScript.FirstChild.Data != server.Prelude() {
		t.Errorf("%s: the prelude is not the first script, right after the policy", name)
	}
	sandbox := false
	for _, p := range policies {
		sandbox = sandbox || (strings.Contains(p, "connect-src 'none'") && strings.Contains(p, "frame-src 'none'"))
	}
	if !sandbox || !strings.Contains(server.HostCSPMeta(), "require-trusted-types-for 'script'") || !strings.Contains(server.HostCSPMeta(), "trusted-types default") {
		t.Errorf("%s: policies %q lack the sandbox's or Trusted Types", name, policies)
	}
}

// An app with nested frames in its markup, built for MCP Apps hosts the
// three ways (mcpapps.Build as snuggen build --target mcp-app does, a
// FileApp, and a BuiltApp of a file built before the defences existed):
// each document served carries them, and a prepared file is served as it
// is.
func TestMCPDocumentsCarryTheDefences(t *testing.T) {
	const app = `<!doctype html><html><head><meta charset="utf-8"><title>Frames</title>
<meta name="snug:display-name" content="Frames"></head><body>
<iframe srcdoc="<script>parent.x=1</script>"></iframe><object></object><embed>
<svg><foreignObject><iframe></iframe></foreignObject></svg>
<p srcdoc="<b>x</b>">text</p>
<script>document.body.append("ran")</script></body></html>`
	dir := t.TempDir()
	path := filepath.Join(dir, "frames.html")
	if err := os.WriteFile(path, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := mcpapps.Build(ctx, pack.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	checkDefences(t, "mcpapps.Build", res.HTML)
	if !mcpapps.IsBuilt(res.HTML) || bytes.Contains(res.HTML, runtimejs.Script) {
		t.Error("mcpapps.Build: not the MCP runtime")
	}
	if res.Manifest.Bytes != len(res.HTML) {
		t.Errorf("manifest bytes %d, document %d", res.Manifest.Bytes, len(res.HTML))
	}
	again, err := server.PrepareStandalone(res.HTML)
	if err != nil || !bytes.Equal(again, res.HTML) {
		t.Errorf("preparing a prepared document changed it (%v)", err)
	}
	// What snuggen mcp served before the defences: the bare build.
	old, err := pack.Build(ctx, pack.Options{Path: path, Runtime: runtimejs.ScriptMCP})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(old.HTML, []byte("<iframe")) {
		t.Fatal("the bare build keeps no iframe; the test proves nothing")
	}
	e := newEnv(t, func(o *mcpapps.Options) {
		o.Apps = []mcpapps.App{mcpapps.FileApp("file", path), mcpapps.BuiltApp("built", res.HTML), mcpapps.BuiltApp("old", old.HTML)}
	})
	cs := e.connect(t, true, protocols[0], nil)
	for _, key := range []string{"file", "built", "old"} {
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://snug/" + key + ".html"})
		if err != nil {
			t.Fatal(err)
		}
		doc := []byte(rr.Contents[0].Text)
		checkDefences(t, key, doc)
		if key != "old" && !bytes.Equal(doc, res.HTML) {
			t.Errorf("%s: served a different document than mcpapps.Build made", key)
		}
	}
}
