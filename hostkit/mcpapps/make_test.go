package mcpapps_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/snuggen/snuggen/hostkit/mcpapps"
	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/internal/fakemodel"
	"github.com/snuggen/snuggen/pack"
)

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range res.Tools {
		out = append(out, tool.Name)
	}
	return out
}

func install(t *testing.T, cs *mcp.ClientSession, name, html string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpapps.InstallTool, Arguments: map[string]any{"name": name, "html": html}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestInstallAppIsPerUser (issue 29 item 4): install_app answers a draft
// that does not build with every diagnostic (line and fix) and installs
// nothing; a draft that builds becomes the caller's app, with its resource
// and open tool on the caller's install server only (the other user lists
// and reads nothing of it), its storage working through its handle, kept
// on disk per user, and offered again by a new server on the same folder.
func TestInstallAppIsPerUser(t *testing.T) {
	habits := fakemodel.CorpusApp(t, "habits")
	for _, pv := range protocols {
		t.Run("protocol "+pv, func(t *testing.T) {
			dir := t.TempDir()
			e := newEnv(t, func(o *mcpapps.Options) {
				withTokens(o)
				o.SharedServer = false
				o.Make = &mcpapps.MakeOptions{Dir: dir}
			})
			alice, bob := e.connectAs(t, "token-of-alice", pv), e.connectAs(t, "token-of-bob", pv)
			if got := toolNames(t, alice); !slices.Equal(got, []string{mcpapps.InstallTool}) {
				t.Fatalf("alice's install server lists %v", got)
			}

			res := install(t, alice, "habits", habits.Replies[0].Text)
			built, _ := pack.Build(context.Background(), pack.Options{Path: "app.html", HTML: []byte(habits.Replies[0].Text), Strict: true})
			text := toolText(res)
			if !res.IsError || len(built.Diagnostics) < 5 {
				t.Fatalf("a broken draft: isError %v, %d diagnostics:\n%s", res.IsError, len(built.Diagnostics), text)
			}
			for _, d := range built.Diagnostics {
				if !strings.Contains(text, d.Detail()) {
					t.Errorf("the result lacks %q", d.Detail())
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("a broken draft was kept: %v", entries)
			}

			res = install(t, alice, "habits", habits.Replies[1].Text)
			if res.IsError || !strings.Contains(toolText(res), "open_made-habits") {
				t.Fatalf("the fixed draft: %s", toolText(res))
			}
			if got := toolNames(t, alice); !slices.Contains(got, "open_made-habits") || !slices.Contains(got, "made-habits__db") {
				t.Fatalf("alice's tools after the install: %v", got)
			}
			if got := toolNames(t, bob); slices.Contains(got, "open_made-habits") {
				t.Fatalf("bob sees alice's app: %v", got)
			}
			if _, err := bob.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "ui://snug/made-habits.html"}); err == nil {
				t.Fatal("bob read alice's app")
			}
			rr, err := alice.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "ui://snug/made-habits.html"})
			if err != nil || !strings.Contains(rr.Contents[0].Text, "Habits") || rr.Contents[0].MIMEType != mcpapps.MIMEType {
				t.Fatalf("alice's resource: %v", err)
			}
			s := open(t, alice, "made-habits")
			if out, r := call(t, alice, s, map[string]any{"type": "snug:db-request", "op": "kvSet", "key": "k", "value": "kept"}); out == nil || out["ok"] != true {
				t.Fatalf("kvSet: %v %s", out, toolText(r))
			}
			pages, _ := filepath.Glob(filepath.Join(dir, "*", "made-habits", "app.html"))
			if len(pages) != 1 {
				t.Fatalf("kept on disk: %v", pages)
			}

			// A new server on the same folder offers it again.
			e2 := newEnv(t, func(o *mcpapps.Options) {
				withTokens(o)
				o.SharedServer = false
				o.Make = &mcpapps.MakeOptions{Dir: dir}
			})
			if got := toolNames(t, e2.connectAs(t, "token-of-alice", pv)); !slices.Contains(got, "open_made-habits") {
				t.Fatalf("after a restart alice lists %v", got)
			}
		})
	}
}

// TestInstallAppAnnouncesTheNewLists: a client with a session is told the
// tools and resources changed when an app is installed.
func TestInstallAppAnnouncesTheNewLists(t *testing.T) {
	e := newEnv(t, func(o *mcpapps.Options) {
		o.SharedServer = false
		o.Make = &mcpapps.MakeOptions{Dir: t.TempDir()}
	})
	var tools, resources atomic.Int32
	cs := e.connect(t, true, "2025-11-25", &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { tools.Add(1) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { resources.Add(1) },
	})
	if res := install(t, cs, "tips", fakemodel.CorpusApp(t, "tips").Replies[0].Text); res.IsError {
		t.Fatal(toolText(res))
	}
	browsertest.Until(t, "the list_changed notifications", func() bool { return tools.Load() > 0 && resources.Load() > 0 })
}

// TestInstallAppOverStdio: with no app given, Run serves install_app's
// server (a desktop client's config entry), and an installed app is on it.
func TestInstallAppOverStdio(t *testing.T) {
	srv, err := mcpapps.New(context.Background(), mcpapps.Options{Make: &mcpapps.MakeOptions{Dir: t.TempDir()}, UI: mcpapps.UIAlways})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Run(ctx, st)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res := install(t, cs, "tips", fakemodel.CorpusApp(t, "tips").Replies[0].Text); res.IsError {
		t.Fatal(toolText(res))
	}
	if got := toolNames(t, cs); !slices.Contains(got, "open_made-tips") {
		t.Fatalf("tools over stdio: %v", got)
	}
}

// TestInstallServersAreForgotten: a user's install_app server (with the
// apps the user installed) is kept while the user holds a session, and
// forgotten once none has been held for the time a session's entry is
// kept: the table holds the users of the last idle period, not every user
// the host ever served. The user's next session offers the apps again,
// from disk. On the old code every user's server stayed.
func TestInstallServersAreForgotten(t *testing.T) {
	habits := fakemodel.CorpusApp(t, "habits")
	e := newEnv(t, func(o *mcpapps.Options) {
		withTokens(o)
		o.SharedServer = false
		o.Make = &mcpapps.MakeOptions{Dir: t.TempDir()}
		o.SessionIdle = time.Second
	})
	const pv = "2025-11-25" // sessions: the server is made when one opens
	alice, bob := e.connectAs(t, "token-of-alice", pv), e.connectAs(t, "token-of-bob", pv)
	if res := install(t, alice, "habits", habits.Replies[1].Text); res.IsError {
		t.Fatalf("install: %s", toolText(res))
	}
	if n := e.srv.InstallServers(); n != 2 {
		t.Fatalf("%d install servers with two users connected", n)
	}
	alice.Close()
	// Bob keeps using his session; carol's sessions, each ended at once,
	// make the server sweep.
	var last time.Time
	forgotten := browsertest.Poll(func() bool {
		if time.Since(last) > 250*time.Millisecond {
			last = time.Now()
			toolNames(t, bob)
			e.connectAs(t, "token-of-carol", pv).Close()
		}
		return e.srv.InstallServers() == 2 // bob's and carol's
	})
	if !forgotten {
		t.Fatalf("alice's install server was kept: %d servers", e.srv.InstallServers())
	}
	if got := toolNames(t, bob); !slices.Contains(got, mcpapps.InstallTool) {
		t.Fatalf("bob, who holds a session, lists %v", got)
	}
	if got := toolNames(t, e.connectAs(t, "token-of-alice", pv)); !slices.Contains(got, "open_made-habits") {
		t.Fatalf("alice's next session lists %v", got)
	}
}
