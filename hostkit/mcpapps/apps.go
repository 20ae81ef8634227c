package mcpapps

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/server"
	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

// App is one app the server serves. Key is the host's own name for it: its
// resource URI (ui://snug/<key>.html), its tools' prefix and its storage
// namespace (hostkit.ValidKey's alphabet). Build returns its document built
// with the MCP flavour of the runtime (runtimejs.ScriptMCP); New prepares
// it with the host's defences (server.PrepareStandalone) before serving it.
type App struct {
	Key   string
	Build func(ctx context.Context) (doc []byte, meta hostkit.Meta, err error)
}

// FileApp is an app from an HTML file on disk and the local files it
// references, packaged by the same packager as snuggen build --target
// mcp-app (the same confined resolution of local files and packages).
func FileApp(key, path string) App {
	return App{Key: key, Build: func(ctx context.Context) ([]byte, hostkit.Meta, error) {
		return build(ctx, pack.Options{Path: path})
	}}
}

// RawApp is an app from raw HTML (an LLM's output as it came), packaged
// with no local files at all.
func RawApp(key string, html []byte) App {
	return App{Key: key, Build: func(ctx context.Context) ([]byte, hostkit.Meta, error) {
		return build(ctx, pack.Options{Path: key + ".html", HTML: html})
	}}
}

// BuiltApp is an app already built by snuggen build --target mcp-app,
// served as it is (New's preparation leaves a file built with the current
// defences unchanged and adds them to one that predates them). IsBuilt
// tells such a document from others.
func BuiltApp(key string, doc []byte) App {
	return App{Key: key, Build: func(context.Context) ([]byte, hostkit.Meta, error) {
		return doc, hostkit.MetaFromHTML(doc, key), nil
	}}
}

// IsBuilt reports whether doc was built for MCP Apps hosts: it carries the
// MCP runtime (whole or tree-shaken) byte for byte.
func IsBuilt(doc []byte) bool {
	return runtimejs.TargetOf(doc) == "mcp"
}

// Build packages an app for MCP Apps hosts, as snuggen build --target
// mcp-app does: pack.Build with the MCP flavour of the runtime, then the
// host's defences that can travel inside the document
// (server.PrepareStandalone: the prelude first, Trusted Types required by a
// meta policy, no nested browsing context in the markup). An MCP Apps host
// sends none of snuggen's headers, so the document is all the sandbox has.
// The manifest's digest and size are the prepared document's.
func Build(ctx context.Context, opts pack.Options) (*pack.Result, error) {
	opts.Runtime = runtimejs.ScriptMCP
	res, err := pack.Build(ctx, opts)
	if err != nil {
		return res, err
	}
	doc, err := server.PrepareStandalone(res.HTML)
	if err != nil {
		return nil, fmt.Errorf("mcpapps: %s: %w", opts.Path, err)
	}
	res.HTML = doc
	sum := sha256.Sum256(doc)
	res.Manifest.SHA256 = hex.EncodeToString(sum[:])
	res.Manifest.Bytes = len(doc)
	return res, nil
}

// build is pack.Build with the MCP runtime; New prepares what it returns.
func build(ctx context.Context, opts pack.Options) ([]byte, hostkit.Meta, error) {
	opts.Runtime = runtimejs.ScriptMCP
	res, err := pack.Build(ctx, opts)
	if err != nil {
		be := &hostkit.BuildError{App: opts.Path, Err: err}
		if res != nil {
			be.Diagnostics = res.Diagnostics
		}
		return nil, hostkit.Meta{}, be
	}
	m := res.Manifest
	return res.HTML, hostkit.Meta{AppID: m.AppID, DisplayName: m.DisplayName, Description: m.Description, IconEmoji: m.IconEmoji, IconColor: m.IconColor}, nil
}

// resourceDomains lists the CDN allowlist origins the document loads from:
// what the host's CSP must let through for the app to run as built. Nothing
// else is ever listed (the sandbox's own CSP allows no more).
func resourceDomains(doc []byte) []string {
	out := []string{}
	for _, h := range frame.CDNAllowlist {
		o := "https://" + h
		// A URL has a path; the CSP meta names the origin alone.
		if bytes.Contains(doc, []byte(o+"/")) {
			out = append(out, o)
		}
	}
	return out
}
