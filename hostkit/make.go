package hostkit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/maker"
	"github.com/snuggen/snuggen/hostkit/relay"
	"github.com/snuggen/snuggen/internal/bytesize"
	"github.com/snuggen/snuggen/pack"
)

// MadeAppsDir is the folder of the data directory (WithDataDir) that keeps
// the apps the runner's make box made: one folder per app, named by its
// key, holding its app.html and its earlier versions (hostkit/maker's
// layout, so snuggen make --app changes them too). A host with a data
// directory lists them with its other apps when it starts.
const MadeAppsDir = "apps"

// MaxConcurrentMakes bounds the makes one host runs at once: each holds a
// model's stream and builds every draft.
const MaxConcurrentMakes = 2

// MakeOptions configure WithMake. The zero value is hostkit/maker's
// defaults, no smoke run, and (with WithAuthenticate) nobody allowed.
type MakeOptions struct {
	// Agent writes the apps; nil is the host's agent (WithAgent). A host
	// may give one with a longer reply bound (a whole app is a long reply).
	Agent agent.Backend
	// Guide returns the system prompt's authoring guide (the text snuggen
	// prompt prints), called at the first make. Required: without it the
	// boxes are off and say so.
	Guide func(ctx context.Context) (string, error)
	// Rounds, MaxReplyBytes and Timeout bound each make (maker.Options).
	Rounds        int
	MaxReplyBytes int
	Timeout       time.Duration
	// Smoke, when set, starts a smoke run for one make (a browser):
	// run checks a built document, stop ends it when the make is over.
	Smoke func(ctx context.Context) (run func(context.Context, []byte) ([]maker.Finding, error), stop func(), err error)
	// Allow, with WithAuthenticate, says which signed-in users may make
	// and change apps: an app made here joins the list every user of the
	// host sees (each with a database of their own). Nil allows nobody.
	// Without WithAuthenticate the host's one local user may.
	Allow func(user string) bool
	// Log gets what the page is not told (a smoke browser that did not
	// start); nil drops it.
	Log func(format string, args ...any)
}

// WithMake turns on the runner's make boxes: "New app" describes an app in
// a sentence and "Change this app", on an open app it made, describes a
// change; either runs hostkit/maker's loop with the host's agent,
// streaming each round's progress and diagnostics to the page, installs
// the app into the data directory (MadeAppsDir, listed with the other apps
// and again after a restart) and opens it. A make that fails installs
// nothing and a change that fails leaves the working version in place;
// each change keeps the version it replaces.
//
// The boxes ride the runner's own WebSocket (relay.Maker), so they are as
// protected as the runner's other actions: only a page of the runner's own
// origin, on its own address, of the user WithAuthenticate names. They
// show only when the agent can write apps (not the offline agent), with a
// data directory, outside replicated mode; otherwise the page says why.
func WithMake(o MakeOptions) Option {
	return func(c *config) error { c.make = &o; return nil }
}

// hostMaker is the Host's relay.Maker.
type hostMaker struct {
	h       *Host
	opts    MakeOptions
	backend agent.Backend
	dir     string // the data directory's MadeAppsDir
	auth    bool   // WithAuthenticate: Allow decides
	why     string // why the boxes are off; "" when they are on

	slots     chan struct{} // MaxConcurrentMakes
	mu        sync.Mutex
	busy      map[string]bool // apps being changed
	guideMu   sync.Mutex
	guideText string // the guide, once rendered
}

func newHostMaker(h *Host, c *config, backend agent.Backend) *hostMaker {
	if c.make.Agent != nil {
		backend = c.make.Agent
	}
	m := &hostMaker{h: h, opts: *c.make, backend: backend, auth: c.auth != nil,
		slots: make(chan struct{}, MaxConcurrentMakes), busy: map[string]bool{}}
	switch _, off := backend.(*offline.Backend); {
	case off:
		m.why = "The offline agent cannot write apps: start the host with an agent that can (snuggen serve --agent openai or --agent anthropic, with its key and --model)."
	case c.cluster != nil:
		m.why = "A replicated host does not make apps here: make them with snuggen make and install them on every replica."
	case m.opts.Guide == nil:
		m.why = "This host has no authoring guide for the agent (hostkit.MakeOptions.Guide), so it makes no apps."
	case c.dataDir == "":
		m.why = "This host keeps no data directory, so a made app would not be kept: start it with a data directory (WithDataDir, snuggen serve --data)."
	default:
		m.dir = filepath.Join(c.dataDir, MadeAppsDir)
	}
	return m
}

// Info implements relay.Maker.
func (m *hostMaker) Info(user string) map[string]any {
	if why := m.refusal(user); why != "" {
		return map[string]any{"ready": false, "why": why}
	}
	o := m.makerOptions()
	return map[string]any{"ready": true, "bounds": fmt.Sprintf("at most %d rounds, %s a reply, %s in all",
		o.Rounds, bytesize.Approx(int64(o.MaxReplyBytes)), o.Timeout)}
}

// refusal is why user may not make apps here, "" when they may.
func (m *hostMaker) refusal(user string) string {
	if m.why != "" {
		return m.why
	}
	if m.auth && (m.opts.Allow == nil || !m.opts.Allow(user)) {
		return "On this host apps are made by its operators: an app made here is listed for every user."
	}
	return ""
}

// makerOptions are the loop's bounds, defaults filled in.
func (m *hostMaker) makerOptions() maker.Options {
	o := maker.Options{Agent: m.backend, Rounds: m.opts.Rounds,
		MaxReplyBytes: m.opts.MaxReplyBytes, Timeout: m.opts.Timeout}
	if o.Rounds <= 0 {
		o.Rounds = maker.DefaultRounds
	}
	o.Rounds = min(o.Rounds, maker.MaxRounds)
	if o.MaxReplyBytes <= 0 {
		o.MaxReplyBytes = maker.DefaultMaxReplyBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = maker.DefaultTimeout
	}
	return o
}

// guide is the system prompt's guide, rendered once.
func (m *hostMaker) guide(ctx context.Context) (string, error) {
	m.guideMu.Lock()
	defer m.guideMu.Unlock()
	if m.guideText == "" {
		g, err := m.opts.Guide(ctx)
		if err != nil {
			return "", fmt.Errorf("the authoring guide: %w", err)
		}
		m.guideText = g
	}
	return m.guideText, nil
}

// makeRound is the page's message about one round that ended.
type makeRound struct {
	T           string   `json:"t"`
	ID          string   `json:"id"`
	Round       int      `json:"round"`
	Line        string   `json:"line"`
	Bytes       int      `json:"bytes"`
	AgentMs     int64    `json:"agentMs"`
	LoopMs      int64    `json:"loopMs"`
	Diagnostics []string `json:"diagnostics,omitempty"`
	Findings    []string `json:"findings,omitempty"`
}

// makeEnd is the page's message that a make is over: App is the app
// installed or changed, Error why there is none.
type makeEnd struct {
	T        string `json:"t"`
	ID       string `json:"id"`
	App      string `json:"app,omitempty"`
	Rounds   int    `json:"rounds,omitempty"`
	Kept     int    `json:"kept,omitempty"`     // the version a change replaced, kept
	Restored int    `json:"restored,omitempty"` // the version a restore made current
	Error    string `json:"error,omitempty"`
}

// Restore implements relay.Maker: the version before the app's current one
// becomes current, the current one kept as the next version (so a restore
// is undone by another).
func (m *hostMaker) Restore(ctx context.Context, user string, req relay.MakeRequest, send func(any)) {
	end := makeEnd{T: "make-end", ID: req.ID, App: req.App}
	n, kept, err := m.restore(ctx, user, req.App)
	if err != nil {
		end.App, end.Error = "", err.Error()
	} else {
		end.Restored, end.Kept = n, kept
	}
	send(end)
}

func (m *hostMaker) restore(ctx context.Context, user, app string) (n, kept int, err error) {
	if why := m.refusal(user); why != "" {
		return 0, 0, errors.New(why)
	}
	if _, err := m.claim(app); err != nil {
		return 0, 0, err
	}
	defer m.release(app)
	dir := filepath.Join(m.dir, app)
	vs, err := maker.Versions(dir)
	if err != nil {
		return 0, 0, err
	}
	if len(vs) == 0 {
		return 0, 0, fmt.Errorf("%s keeps no earlier version", app)
	}
	n = vs[len(vs)-1].N
	if kept, err = maker.Restore(dir, n); err != nil {
		return 0, 0, err
	}
	if err := m.h.Apps.Reload(ctx, app); err != nil {
		_, _ = maker.Restore(dir, kept)
		_ = m.h.Apps.Reload(ctx, app)
		return 0, 0, fmt.Errorf("version %d no longer builds, so the current one stays: %w", n, err)
	}
	return n, kept, nil
}

// Make implements relay.Maker.
func (m *hostMaker) Make(ctx context.Context, user string, req relay.MakeRequest, send func(any)) {
	end := makeEnd{T: "make-end", ID: req.ID}
	app, rounds, kept, err := m.make(ctx, user, req, send)
	if err != nil {
		end.Error = err.Error()
	} else {
		end.App, end.Rounds, end.Kept = app, rounds, kept
	}
	send(end)
}

func (m *hostMaker) make(ctx context.Context, user string, req relay.MakeRequest, send func(any)) (app string, rounds, kept int, err error) {
	if why := m.refusal(user); why != "" {
		return "", 0, 0, errors.New(why)
	}
	select {
	case m.slots <- struct{}{}:
		defer func() { <-m.slots }()
	default:
		return "", 0, 0, fmt.Errorf("the host is making %d apps already: try again when one ends", MaxConcurrentMakes)
	}
	var source []byte
	if req.App != "" {
		if source, err = m.claim(req.App); err != nil {
			return "", 0, 0, err
		}
		defer m.release(req.App)
	}
	opts, stop, err := m.loopOptions(ctx, req.ID, send)
	if err != nil {
		return "", 0, 0, err
	}
	defer stop()
	res, err := maker.Make(ctx, opts, maker.Request{Prompt: req.Prompt, Source: source})
	if err != nil {
		return "", 0, 0, err
	}
	if req.App != "" {
		kept, err = m.change(ctx, req.App, res.Source)
		return req.App, len(res.Rounds), kept, err
	}
	app, err = m.install(ctx, res)
	return app, len(res.Rounds), 0, err
}

// claim marks app as being changed and returns its source: only an app
// the make box made, one change at a time.
func (m *hostMaker) claim(app string) ([]byte, error) {
	if !m.h.Apps.made(app) {
		return nil, fmt.Errorf("%s was not made here, so it is not changed here: change its file, or run snuggen make --app on its folder", app)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.busy[app] {
		return nil, fmt.Errorf("%s is being changed already: wait for that change to end", app)
	}
	src, err := os.ReadFile(filepath.Join(m.dir, app, maker.Page))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", app, err)
	}
	m.busy[app] = true
	return src, nil
}

func (m *hostMaker) release(app string) {
	m.mu.Lock()
	delete(m.busy, app)
	m.mu.Unlock()
}

// loopOptions are the loop's options for one make: the bounds, the guide,
// the smoke run, and the progress sent to the page (the bytes of the
// reply streaming at most every quarter second).
func (m *hostMaker) loopOptions(ctx context.Context, id string, send func(any)) (maker.Options, func(), error) {
	opts := m.makerOptions()
	g, err := m.guide(ctx)
	if err != nil {
		return opts, nil, err
	}
	opts.Guide = g
	stop := func() {}
	if m.opts.Smoke != nil {
		run, end, err := m.opts.Smoke(ctx)
		switch {
		case err != nil && m.opts.Log != nil:
			m.opts.Log("make: no smoke run: %v", err)
		case err == nil:
			opts.Smoke, stop = run, end
		}
	}
	opts.Progress = func(r maker.Round) { send(roundMessage(id, r)) }
	var last time.Time
	opts.Streaming = func(round, bytes int) {
		if now := time.Now(); now.Sub(last) >= 250*time.Millisecond {
			last = now
			send(map[string]any{"t": "make-bytes", "id": id, "round": round, "bytes": bytes})
		}
	}
	return opts, stop, nil
}

func roundMessage(id string, r maker.Round) makeRound {
	msg := makeRound{T: "make-round", ID: id, Round: r.N, Line: r.Line(), Bytes: r.Bytes,
		AgentMs: r.Agent.Milliseconds(), LoopMs: r.Loop.Milliseconds()}
	for _, d := range r.Diagnostics {
		msg.Diagnostics = append(msg.Diagnostics, d.Detail())
	}
	for _, f := range r.Findings {
		msg.Findings = append(msg.Findings, strings.TrimSpace(f.Detail()))
	}
	return msg
}

// install writes a new app into the data directory under a key of its
// own (from its display name) and adds it to the host.
func (m *hostMaker) install(ctx context.Context, res *maker.Result) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	base := KeyFromPath(res.Manifest.DisplayName + ".html")
	key := base
	for n := 2; m.taken(key); n++ {
		suffix := fmt.Sprintf("-%d", n)
		key = base[:min(len(base), 64-len(suffix))] + suffix
	}
	dir := filepath.Join(m.dir, key)
	if _, err := maker.Install(dir, res.Source); err != nil {
		return "", err
	}
	if err := m.h.Apps.install(ctx, madeApp(key, filepath.Join(dir, maker.Page)), true); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return key, nil
}

// taken reports whether key names an installed app or a folder of the
// made apps (one a failed start left, say).
func (m *hostMaker) taken(key string) bool {
	if m.h.Apps.installed(key) {
		return true
	}
	_, err := os.Lstat(filepath.Join(m.dir, key))
	return !errors.Is(err, fs.ErrNotExist)
}

// change installs src as app's new version (the old one kept) and
// reloads it on the pages. A reload that fails puts the old one back.
func (m *hostMaker) change(ctx context.Context, app string, src []byte) (int, error) {
	dir := filepath.Join(m.dir, app)
	kept, err := maker.Install(dir, src)
	if err != nil {
		return 0, err
	}
	if err := m.h.Apps.Reload(ctx, app); err != nil {
		if _, rerr := maker.Restore(dir, kept); rerr != nil {
			return 0, errors.Join(err, rerr)
		}
		_ = m.h.Apps.Reload(ctx, app)
		return 0, fmt.Errorf("the new version did not install, the old one is back: %w", err)
	}
	return kept, nil
}

// madeApp is an app of the make box: its page in the data directory,
// packaged from memory on every build (as the loop built it: no file of
// the host is read into it, whatever the page names).
func madeApp(key, page string) App {
	return App{Key: key, Build: func(ctx context.Context) ([]byte, Meta, error) {
		src, err := os.ReadFile(page)
		if err != nil {
			return nil, Meta{}, fmt.Errorf("app %s: %w", key, err)
		}
		return packApp(ctx, pack.Options{Path: maker.Page, HTML: src})
	}}
}

// addMade adds the apps kept under dataDir's MadeAppsDir (a host
// starting).
func (a *Apps) addMade(dataDir string) error {
	made, err := madeApps(dataDir)
	if err != nil {
		return err
	}
	for _, app := range made {
		if a.installed(app.Key) {
			return fmt.Errorf("hostkit: app key %q is both given and made in %s: rename that folder or the given app", app.Key, filepath.Join(dataDir, MadeAppsDir, app.Key))
		}
		if err := a.add(app, true); err != nil {
			return err
		}
	}
	return nil
}

// madeApps lists the apps kept under dataDir's MadeAppsDir, by folder
// name; a folder whose name is no app key, or that holds no app.html, is
// not an app.
func madeApps(dataDir string) ([]App, error) {
	dir := filepath.Join(dataDir, MadeAppsDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hostkit: the made apps: %w", err)
	}
	var out []App
	for _, e := range entries {
		page := filepath.Join(dir, e.Name(), maker.Page)
		if !e.IsDir() || !validKey(e.Name()) {
			continue
		}
		if _, err := os.Stat(page); err != nil {
			continue
		}
		out = append(out, madeApp(e.Name(), page))
	}
	return out, nil
}
