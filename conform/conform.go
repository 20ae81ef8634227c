// Package conform is snuggen's conformance kit for Snug hosts: the kit
// itself, a Snug app (Kit builds it with the packager, the ordinary runtime
// and the kit's own raw-frame layer), the report it leaves on its page, and
// the driver that opens it in headless Chromium, answers the host's dialogs
// and reads the report (Drive, Run).
//
// The kit runs inside the host like any app, through the host's sandbox and
// relay, and needs nothing from the host beyond the protocol. Each case is
// named by a rule id of schemas/rules.json's normativeRules
// (frame.NormativeRules): handshake, R1–R7, db, net, open-url, C1, C2; where a
// frame rule, refinement or schema keyword decides the answer, the case also
// names that rule id. What a host must answer to a frame the spec rejects is
// computed by the generated reference checker (checkFrame), not restated.
//
// Its limit: the kit sees only what reaches its frame. That a refused
// network request never left the machine, or that a dialog was the host's
// own, is shown by what the browser reports (CSP violations) and by the
// driver, not proven from the host's side; the host's own tests do that.
package conform

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"testing/fstest"

	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

// AppKey is the key the kit is installed under by snuggen conform, and the
// appId it announces.
const AppKey = "snug-conform"

//go:embed kit
var kitFS embed.FS

// Source returns the kit's sources as the packager reads them: the kit's
// folder (app.html, its scripts and styles) with the runtime's modules
// under gen/ (generated: constants, validators, checkFrame) and src/.
func Source() (fs.FS, error) {
	m := fstest.MapFS{}
	err := fs.WalkDir(kitFS, "kit", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(kitFS, p)
		m[p[len("kit/"):]] = &fstest.MapFile{Data: b, Mode: 0o644}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("conform: read the kit: %w", err)
	}
	// The generated modules and the runtime's own (checkFrame, the
	// validator core) import each other across gen/ and src/, so both
	// folders come along as they are laid out.
	err = fs.WalkDir(runtimejs.Modules, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(runtimejs.Modules, p)
		m[p] = &fstest.MapFile{Data: b, Mode: 0o644}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("conform: read the runtime's modules: %w", err)
	}
	return m, nil
}

// Builder builds an app: pack.Build for Snug hosts, mcpapps.Build for MCP
// Apps hosts (the MCP runtime and the defences the document carries there).
type Builder func(context.Context, pack.Options) (*pack.Result, error)

// Kit builds the kit into one self-contained Snug app with build (nil:
// pack.Build, the Snug runtime), strict: a warning is an error.
func Kit(ctx context.Context, build Builder) ([]byte, error) {
	src, err := Source()
	if err != nil {
		return nil, err
	}
	if build == nil {
		build = pack.Build
	}
	res, err := build(ctx, pack.Options{Path: "app.html", FS: src, Strict: true})
	if err != nil {
		var b bytes.Buffer
		if res != nil {
			for _, d := range res.Diagnostics {
				fmt.Fprintln(&b, d.String())
			}
		}
		return nil, fmt.Errorf("conform: build the kit: %w\n%s", err, b.String())
	}
	if len(res.HTML) == 0 {
		return nil, errors.New("conform: the kit built to nothing")
	}
	return res.HTML, nil
}
