package hostkit

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/snuggen/snuggen/hostkit/server"
	"github.com/snuggen/snuggen/internal/csscolor"
	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

// Meta is an app's display metadata, from its build manifest (the app's own
// file, or what installed it). It is what the runner's list and dialogs
// show; it is never an identity. An app's announce does not change it: that
// is one instance's claim about itself, shown on that instance only.
type Meta struct {
	AppID       string
	DisplayName string
	Description string
	IconEmoji   string
	IconColor   string
}

// App is one installed app. Key is the host's own name for it: the URL path
// segment of its document and its storage namespace (letters, digits, '.',
// '_' and '-'). Build returns its document ready to run; the host calls it
// at New and on Apps.Reload, and serves the last good result.
type App struct {
	Key   string
	Build func(ctx context.Context) (doc []byte, meta Meta, err error)
}

// RawApp is an app from raw HTML (an LLM's output as it came), packaged with
// the same packager as snuggen build: the runtime injected, scripts and
// styles bundled, the CSP meta added.
func RawApp(key string, html []byte) App {
	return App{Key: key, Build: func(ctx context.Context) ([]byte, Meta, error) {
		return packApp(ctx, pack.Options{Path: key + ".html", HTML: html})
	}}
}

// FileApp is an app from an HTML file on disk and the local files it
// references, packaged on every build (so Reload picks up edits). A file
// snuggen build already built (it carries this snuggen's runtime) is served
// as it is, as snuggen serve does: packaging it again would give it a
// second runtime.
func FileApp(key, path string) App {
	return App{Key: key, Build: func(ctx context.Context) ([]byte, Meta, error) {
		if doc, err := pack.ReadPage(path); err == nil && runtimejs.TargetOf(doc) == "snug" {
			return doc, MetaFromHTML(doc, key), nil
		}
		doc, meta, _, err := PackFile(ctx, path)
		return doc, meta, err
	}}
}

// PackFile packages the HTML file at path as FileApp does and returns, with
// the document and its metadata, the files the build read
// (pack.Result.Inputs; also after a failed build, so a watcher can wait for
// the fix).
func PackFile(ctx context.Context, path string) (doc []byte, meta Meta, inputs []string, err error) {
	res, err := pack.Build(ctx, pack.Options{Path: path})
	if res != nil {
		inputs = res.Inputs
	}
	doc, meta, err = packed(path, res, err)
	return doc, meta, inputs, err
}

// BuiltApp is an app already built by snuggen build, served as it is.
func BuiltApp(key string, doc []byte, meta Meta) App {
	return App{Key: key, Build: func(context.Context) ([]byte, Meta, error) { return doc, meta, nil }}
}

// BuildError is a failed packaging, with the packager's diagnostics.
type BuildError struct {
	App         string
	Diagnostics []pack.Diagnostic
	Err         error
}

func (e *BuildError) Error() string {
	msg := fmt.Sprintf("app %s: %v", e.App, e.Err)
	for _, d := range e.Diagnostics {
		if d.Severity == pack.SeverityError {
			msg += "\n  " + d.String()
		}
	}
	return msg
}

func (e *BuildError) Unwrap() error { return e.Err }

func packApp(ctx context.Context, opts pack.Options) ([]byte, Meta, error) {
	res, err := pack.Build(ctx, opts)
	return packed(opts.Path, res, err)
}

// packed is a build's outcome as an app's document and metadata.
func packed(path string, res *pack.Result, err error) ([]byte, Meta, error) {
	if err != nil {
		be := &BuildError{App: path, Err: err}
		if res != nil {
			be.Diagnostics = res.Diagnostics
		}
		return nil, Meta{}, be
	}
	m := res.Manifest
	return res.HTML, Meta{AppID: m.AppID, DisplayName: m.DisplayName, Description: m.Description, IconEmoji: m.IconEmoji, IconColor: m.IconColor}, nil
}

// Apps is the host's catalog of installed apps. It is safe for concurrent use.
type Apps struct {
	mu       sync.Mutex
	order    []string
	byKey    map[string]*appEntry
	onChange func(reloaded string) // set by New: tells the pages
}

type appEntry struct {
	app  App
	doc  []byte
	meta Meta
	// problems are the last build's failure, one line each (empty once a
	// build works): the packager's errors at file:line:col with why and fix.
	problems []string
	// made is an app the runner's make box made, kept in the data
	// directory: the runner offers to change it.
	made bool
}

func newApps(list []App) (*Apps, error) {
	a := &Apps{byKey: make(map[string]*appEntry)}
	for _, app := range list {
		if err := a.add(app, false); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// add installs app at the end of the list; made marks an app of the make
// box. The caller holds a.mu or owns a.
func (a *Apps) add(app App, made bool) error {
	if !validKey(app.Key) {
		return fmt.Errorf("hostkit: app key %q: use 1-64 letters, digits, '.', '_' or '-', not starting with '.'", app.Key)
	}
	if _, dup := a.byKey[app.Key]; dup {
		return fmt.Errorf("hostkit: app key %q installed twice; give one of them another name", app.Key)
	}
	if app.Build == nil {
		return fmt.Errorf("hostkit: app %q has no Build", app.Key)
	}
	a.byKey[app.Key] = &appEntry{app: app, made: made}
	a.order = append(a.order, app.Key)
	return nil
}

// install adds app to a running host's list, builds it and tells the
// runner pages; made marks an app the runner's make box may change. A
// build that fails leaves the app out.
func (a *Apps) install(ctx context.Context, app App, made bool) error {
	a.mu.Lock()
	err := a.add(app, made)
	a.mu.Unlock()
	if err != nil {
		return err
	}
	if err := a.build(ctx, app.Key); err != nil {
		a.mu.Lock()
		delete(a.byKey, app.Key)
		a.order = slices.DeleteFunc(a.order, func(k string) bool { return k == app.Key })
		a.mu.Unlock()
		return err
	}
	if f := a.onChange; f != nil {
		f("")
	}
	return nil
}

// made reports whether key is an app the make box made.
func (a *Apps) made(key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.byKey[key]
	return ok && e.made
}

// ValidKey reports whether key can name an installed app.
func ValidKey(key string) bool { return validKey(key) }

func validKey(k string) bool {
	if k == "" || len(k) > 64 || k[0] == '.' {
		return false
	}
	for i := 0; i < len(k); i++ {
		b := k[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '.' || b == '_' || b == '-') {
			return false
		}
	}
	return true
}

// BuildAll builds every app that has no document yet. Each failure is
// returned; the other apps are built.
func (a *Apps) BuildAll(ctx context.Context) []error {
	var errs []error
	for _, key := range a.Keys() {
		a.mu.Lock()
		e := a.byKey[key]
		built := e.doc != nil
		a.mu.Unlock()
		if built {
			continue
		}
		if err := a.build(ctx, key); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func (a *Apps) build(ctx context.Context, key string) error {
	a.mu.Lock()
	e, ok := a.byKey[key]
	a.mu.Unlock()
	if !ok {
		return fmt.Errorf("hostkit: no app %q", key)
	}
	doc, meta, err := e.app.Build(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		e.problems = problemLines(err)
		return err
	}
	e.doc, e.meta, e.problems = doc, meta, nil
	return nil
}

// problemLines is a failed build as the runner lists it: each error
// diagnostic, or the error itself.
func problemLines(err error) []string {
	var be *BuildError
	if errors.As(err, &be) {
		var out []string
		for _, d := range be.Diagnostics {
			if d.Severity == pack.SeverityError {
				out = append(out, d.String())
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return []string{err.Error()}
}

// Problems returns why app key's last build failed (nil when it worked).
func (a *Apps) Problems(key string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.byKey[key]; ok {
		return slices.Clone(e.problems)
	}
	return nil
}

// Reload builds app key again and, when that works, tells every runner page
// to reload its frames of it. A failed build keeps the last good document.
func (a *Apps) Reload(ctx context.Context, key string) error {
	if err := a.build(ctx, key); err != nil {
		if f := a.onChange; f != nil {
			f("") // the list shows the problem
		}
		return err
	}
	if f := a.onChange; f != nil {
		f(key)
	}
	return nil
}

// Keys lists the installed apps' keys in order.
func (a *Apps) Keys() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.order)
}

func (a *Apps) installed(key string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.byKey[key]
	return ok
}

// Meta returns app key's display metadata, from its build (never from an
// announce).
func (a *Apps) Meta(key string) (Meta, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.byKey[key]
	if !ok {
		return Meta{}, false
	}
	return e.meta, true
}

// Apps implements server.Catalog (the server fills each URL).
func (a *Apps) Apps() []server.AppInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]server.AppInfo, 0, len(a.order))
	for _, key := range a.order {
		e := a.byKey[key]
		m := e.meta
		out = append(out, server.AppInfo{
			App:   key,
			AppID: m.AppID, DisplayName: m.DisplayName, Description: m.Description,
			IconEmoji: m.IconEmoji, IconColor: csscolor.Clean(m.IconColor),
			Problems: slices.Clone(e.problems), Broken: e.doc == nil && e.problems != nil,
			Made: e.made,
		})
	}
	return out
}

// Document implements server.Catalog: the last good build, building now if
// there is none yet.
func (a *Apps) Document(ctx context.Context, key string) ([]byte, bool, error) {
	a.mu.Lock()
	e, ok := a.byKey[key]
	var doc []byte
	if ok {
		doc = e.doc
	}
	a.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	if doc == nil {
		if err := a.build(ctx, key); err != nil {
			return nil, true, err
		}
		a.mu.Lock()
		doc = e.doc
		a.mu.Unlock()
	}
	return doc, true, nil
}

// KeyFromPath derives an app key from a file path: the file's base name
// without extension, or the folder's name for an index.html/app.html.
func KeyFromPath(path string) string {
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	name := base[:len(base)-len(ext)]
	if name == "index" || name == "app" {
		name = filepath.Base(filepath.Dir(path))
	}
	out := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		b := name[i]
		switch {
		case 'A' <= b && b <= 'Z':
			out = append(out, b+'a'-'A')
		case 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '_' || b == '-' || b == '.':
			out = append(out, b)
		default:
			out = append(out, '-')
		}
	}
	for len(out) > 0 && out[0] == '.' {
		out = out[1:]
	}
	if len(out) > 64 {
		out = out[:64]
	}
	if len(out) == 0 {
		return "app"
	}
	return string(out)
}

// MetaFromHTML reads the <meta name="snug:…"> tags of a built app (the
// names snuggen build writes from the app-announce fields). A missing
// display name falls back to key.
func MetaFromHTML(doc []byte, key string) Meta {
	v := pack.ReadMeta(doc)
	m := Meta{AppID: v["appId"], DisplayName: v["displayName"], Description: v["description"], IconEmoji: v["iconEmoji"], IconColor: v["iconColor"]}
	if m.DisplayName == "" {
		m.DisplayName = key
	}
	return m
}
