// Package pack is the packager behind "snuggen build": it turns an app's HTML
// page and the local files it references into one self-contained HTML file
// that runs in a Snug host's sandbox.
//
// Build parses the page (golang.org/x/net/html), bundles, tree-shakes and
// minifies its scripts and styles with esbuild's Go API (inline sources reach
// esbuild through a plugin), inlines images and fonts as data URIs, keeps
// external scripts and stylesheets only from the CDN allowlist, injects the
// Snug runtime and a Content-Security-Policy meta derived from the runner's
// sandbox policy, and reports what will not work in the sandbox with the Snug
// call to use instead.
//
// Limit: pack works on one page at a time and never touches the network; a
// reference it cannot inline or keep (a non-allowlisted host, a missing file,
// an asset over the size limit) is an error, never a silent drop. Output is
// byte-identical for identical input.
//
// Confinement: the build reads files only inside the app's folder. Every
// reference it follows (src, href, srcset, CSS url() and @import, JS
// import and require, package.json entries) is cleaned and checked, then
// opened through an os.Root of the folder; a reference that leads out (by
// "..", percent-encoded dots, a backslash, a file: URL or a symbolic link)
// or names a directory, device or FIFO is a build error at the reference
// (ref.outside, ref.not-file). esbuild reads nothing by itself: the plugin
// resolves and loads every path.
package pack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// DefaultMaxAssetBytes is the default per-asset limit for files inlined as
// data URIs (images, fonts, media). An app's assets ride inside its one HTML
// file, so a large asset makes every load slow.
const DefaultMaxAssetBytes = 512 << 10

// Options says what to build.
type Options struct {
	// Path names the page. Without FS it is a file on disk and local
	// references resolve against its directory; with FS it is the page's path
	// inside FS. Diagnostics name files relative to the page's directory.
	Path string
	// HTML, when non-nil, is the page's content, used instead of reading
	// Path. Without FS such a page has no local files at all: nothing on
	// disk is read (hostkit packages an LLM's raw HTML this way).
	HTML []byte
	// FS, when non-nil, holds the files the page references, rooted at the
	// app's folder. Nothing outside FS is read: a symbolic link the FS
	// exposes (fs.ReadLinkFS, as os.DirFS does) must be relative and stay
	// inside it. Packages are looked up in node_modules folders inside FS.
	// Without FS the app's folder is the page's directory on disk, with its
	// symbolic links resolved; nothing outside it is read.
	FS fs.FS
	// Runtime is the Snug runtime script injected first in <head>; nil means
	// the runtime built into snuggen.
	Runtime []byte
	// MaxAssetBytes caps each asset inlined as a data URI; 0 means
	// DefaultMaxAssetBytes.
	MaxAssetBytes int64
	// Strict turns every warning into an error.
	Strict bool
}

// Severity says whether a diagnostic fails the build.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	// SeverityNote says something about the build that needs no change
	// (such as the app getting the whole runtime); Strict keeps it a note.
	SeverityNote Severity = "note"
)

// Diagnostic is one finding, located in the app's source.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	// Code is a stable id such as "sandbox.network" or "cdn.not-allowed".
	Code string `json:"code"`
	// File is relative to the page's directory; Line and Column are 1-based
	// (the column counts bytes). Line is 0 when the finding has no place.
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	// Message says what is wrong, Why says why in one line, Fix names what to
	// do instead (the Snug replacement where there is one).
	Message  string `json:"message"`
	Why      string `json:"why,omitempty"`
	Fix      string `json:"fix,omitempty"`
	LineText string `json:"lineText,omitempty"`
}

// String formats d like a compiler: "file:line:col: severity: message (why)".
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", d.Line, d.Column)
	}
	fmt.Fprintf(&b, ": %s: %s", d.Severity, d.Message)
	if d.Why != "" {
		fmt.Fprintf(&b, " (%s)", d.Why)
	}
	if d.Fix != "" {
		fmt.Fprintf(&b, "; %s", d.Fix)
	}
	return b.String()
}

// Detail formats d as snuggen build prints it, for a person or a model to
// act on: the String line without why and fix, then the source line with a
// caret under the column, then "why:" and "fix:" lines. It ends with a
// newline.
func (d Diagnostic) Detail() string {
	var b strings.Builder
	b.WriteString(d.File + ":")
	if d.Line > 0 {
		fmt.Fprintf(&b, "%d:%d:", d.Line, d.Column)
	}
	fmt.Fprintf(&b, " %s: %s\n", d.Severity, d.Message)
	if d.LineText != "" && d.Line > 0 {
		text := strings.ReplaceAll(d.LineText, "\t", " ")
		if len(text) > 200 {
			text = text[:200]
		}
		fmt.Fprintf(&b, "  %5d | %s\n", d.Line, text)
		if d.Column-1 <= len(text) {
			fmt.Fprintf(&b, "        | %s^\n", strings.Repeat(" ", max(d.Column-1, 0)))
		}
	}
	if d.Why != "" {
		fmt.Fprintf(&b, "  why: %s\n", d.Why)
	}
	if d.Fix != "" {
		fmt.Fprintf(&b, "  fix: %s\n", d.Fix)
	}
	return b.String()
}

// Manifest describes a built app.
type Manifest struct {
	AppID       string `json:"appId"`
	DisplayName string `json:"displayName"`
	Description string `json:"description,omitempty"`
	IconEmoji   string `json:"iconEmoji,omitempty"`
	IconColor   string `json:"iconColor,omitempty"`
	// SHA256 is the hex digest of the built HTML; Bytes its length.
	SHA256 string `json:"sha256"`
	Bytes  int    `json:"bytes"`
	// Capabilities lists the Snug capabilities the app's code uses, sorted:
	// "ask", "db", "net", "openUrl".
	Capabilities []string `json:"capabilities"`
}

// Result is a build's outcome. HTML and Manifest are set only when the build
// succeeded; Diagnostics always holds every finding, errors first by place.
type Result struct {
	HTML        []byte
	Manifest    Manifest
	Diagnostics []Diagnostic
	// Inputs lists the local files the build read (absolute paths on disk,
	// FS paths with FS), sorted; a watcher rebuilds when one changes.
	Inputs []string
}

// ErrFailed is returned (wrapped) by Build when a diagnostic is an error.
var ErrFailed = errors.New("build failed")

// Errors counts the error diagnostics.
func (r *Result) Errors() int {
	n := 0
	for _, d := range r.Diagnostics {
		if d.Severity == SeverityError {
			n++
		}
	}
	return n
}

// Build packages one page. It returns a Result in every case where it could
// read the page; the error is non-nil (wrapping ErrFailed) when any
// diagnostic is an error, and then Result.HTML is nil. ctx is checked
// between stages (a running esbuild pass is not interrupted). Build is safe
// for concurrent use.
func Build(ctx context.Context, opts Options) (*Result, error) {
	if opts.Path == "" {
		return nil, errors.New("pack: Options.Path is empty")
	}
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	defer b.src.close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := b.run(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts.Strict {
		for i := range res.Diagnostics {
			if res.Diagnostics[i].Severity != SeverityNote {
				res.Diagnostics[i].Severity = SeverityError
			}
		}
	}
	sortDiagnostics(res.Diagnostics)
	if n := res.Errors(); n > 0 {
		res.HTML = nil
		res.Manifest = Manifest{}
		word := "errors"
		if n == 1 {
			word = "error"
		}
		return res, fmt.Errorf("pack: %s: %d %s: %w", opts.Path, n, word, ErrFailed)
	}
	sum := sha256.Sum256(res.HTML)
	res.Manifest.SHA256 = hex.EncodeToString(sum[:])
	res.Manifest.Bytes = len(res.HTML)
	return res, nil
}

func sortDiagnostics(ds []Diagnostic) {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Severity != b.Severity {
			return a.Severity == SeverityError
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Message < b.Message
	})
}
