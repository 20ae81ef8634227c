package runtimejs

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The runtime budgets of issue 16, min+gzip (gzip -9). An app pays for the
// capability members it names (snuggen build injects the matching
// dist/shaken variant) and for the forms when its page may have one; every
// app pays for the base: the handshake, the acceptors of host-ready,
// host-event and the answers it can get, the core error registry R5 needs,
// theme and resize. Each budget is the measurement with about 4% of
// headroom: the source is written for people and esbuild shrinks it (issue
// 27 item 4; TestSourcesArePlain keeps hand-golf out), so a budget that
// equals its measurement to the byte would invite golf again. The issue's
// goals (4,096 B full, 2,400 B ask-only, 3,000 B ask + db + forms) are
// bench/all's rows; docs/decisions.md ("Tree-shaken runtime") has the
// measured floor under each part. Raise a budget only with a line there.
const (
	// FullBudget holds dist/snug.js, every member: 5,644 B measured (5,544
	// B before issue 26 item 8's link routing, 5,378 B before item 2's
	// window and TOO_MANY_REQUESTS).
	FullBudget = 5766
	// AskBudget holds an ask-only app's runtime, no form: 2,577 B measured
	// (2,458 B before issue 26 item 2).
	AskBudget = 2680
	// AskDBBudget holds an ask + db + forms app's runtime (dist/forms.js
	// before the variant): 3,436 B measured (3,300 B before issue 26 item 2).
	AskDBBudget = 3573
	// MCPAskBudget holds an MCP ask-only app's runtime: 2,569 B measured
	// (2,607 B while it carried the db lane and the teardown's wait, which
	// only a runtime with db or net uses; 2,342 B before issue 26 item 5's
	// teardown wait, 2,433 B before item 2's window, 2,561 B before item
	// 1's one db request at a time).
	MCPAskBudget = 2672
)

func variant(t *testing.T, target string, members ...string) []byte {
	t.Helper()
	rt, ok := Shaken(target, func(m string) bool {
		for _, w := range members {
			if w == m {
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("no runtime for target %s", target)
	}
	return rt
}

// TestRuntimeBudgets holds each budget, and checks that a variant has what
// it was built with and not what it was built without.
func TestRuntimeBudgets(t *testing.T) {
	full := gzipped(t, Injected(Script))
	ask := variant(t, "snug", "ask")
	askDB := variant(t, "snug", "ask", "db", "forms")
	mcpAsk := variant(t, "mcp", "ask")
	for _, c := range []struct {
		name   string
		script []byte
		budget int
	}{
		{"dist/snug.js (as injected)", Injected(Script), FullBudget},
		{"ask-only (dist/shaken/snug-ask.js)", ask, AskBudget},
		{"ask + db + forms (dist/forms.js, dist/shaken/snug-ask-db.js)", askDB, AskDBBudget},
		{"MCP ask-only (dist/shaken/mcp-ask.js)", mcpAsk, MCPAskBudget},
	} {
		n := gzipped(t, c.script)
		t.Logf("%-48s %5d B min+gzip (budget %d, full %d)", c.name, n, c.budget, full)
		if n > c.budget {
			t.Errorf("%s is %d B min+gzip, past its budget of %d B", c.name, n, c.budget)
		}
	}
	// The members: a variant carries the request types of its members only.
	for _, c := range []struct {
		script      []byte
		has, hasNot []string
	}{
		// ask: its responseSchema field; db: its kvGet op and its answer's
		// lastInsertRowid; net: the credential header refusal; saveFile: its
		// answer's type and the blob URLs downloads remembers; onPartial:
		// its reader's fence search; openUrl: its request and links' console
		// word for a link it does not follow.
		{ask, []string{"responseSchema", "THREAD_CONFLICT"}, []string{"requestSubmit", `"kvGet"`, "lastInsertRowid", "injects credentials", `"snug:save-file-result"`, "createObjectURL", "```", `"snug:open-url-request"`, "not following"}},
		{askDB, []string{"requestSubmit", "responseSchema", `"kvGet"`, "lastInsertRowid", "THREAD_CONFLICT", "DB_TIMEOUT"}, []string{"injects credentials", `"snug:save-file-result"`, `"snug:open-url-request"`, "not following"}},
		{variant(t, "snug", "ask", "openUrl"), []string{"responseSchema", `"snug:open-url-request"`, `"snug:open-url-result"`, "not following"}, []string{`"kvGet"`, "createObjectURL"}},
		{variant(t, "mcp", "openUrl"), []string{`"snug:open-url-request"`, "not following"}, []string{"responseSchema", "THREAD_CONFLICT"}},
		{mcpAsk, []string{"responseSchema"}, []string{`"kvGet"`, "THREAD_CONFLICT", "```"}},
		{variant(t, "snug", "net", "saveFile"), []string{"injects credentials", `"snug:save-file-result"`, "createObjectURL"}, []string{"responseSchema", `"kvGet"`, "lastInsertRowid", "```"}},
		{variant(t, "snug", "ask", "onPartial"), []string{"responseSchema", "```"}, []string{`"snug:save-file-result"`, "createObjectURL"}},
	} {
		for _, s := range c.has {
			if !bytes.Contains(c.script, []byte(s)) {
				t.Errorf("a variant lacks %s", s)
			}
		}
		for _, s := range c.hasNot {
			if bytes.Contains(c.script, []byte(s)) {
				t.Errorf("a variant carries %s, which its members do not use", s)
			}
		}
	}
	if all := variant(t, "snug", "ask", "db", "net", "openUrl", "saveFile", "onPartial", "forms"); !bytes.Equal(all, Injected(Script)) {
		t.Error("every member and the forms should give dist/snug.js itself")
	}
	// The forms come before the runtime, as they ran before it in the full one.
	if !bytes.HasPrefix(askDB, Injected(Forms)) || !bytes.Contains(Injected(Script), []byte("requestSubmit")) || !bytes.Contains(Injected(ScriptMCP), []byte("requestSubmit")) {
		t.Error("the forms are not before a runtime asked for with them, or a full runtime lacks them")
	}
	if all := variant(t, "mcp", "ask", "db", "net", "openUrl", "saveFile", "onPartial"); bytes.Equal(all, Injected(ScriptMCP)) || bytes.Contains(all, []byte("requestSubmit")) {
		t.Error("every member without the forms should give a runtime without them")
	}
	if TargetOf(append(append([]byte("<script>"), ask...), "</script>"...)) != "snug" || TargetOf(mcpAsk) != "mcp" || TargetOf([]byte("<p>x")) != "" {
		t.Error("TargetOf does not name the runtime a page carries")
	}
}

// TestRuntimeParts logs what each member and the forms cost (go test
// ./runtime-js -run RuntimeParts -v: docs/decisions.md's floors), as the
// bytes it adds to the base and the bytes the full runtime loses without
// it, and checks that each is a part of its own: a runtime without it is
// smaller.
func TestRuntimeParts(t *testing.T) {
	all := []string{"ask", "db", "net", "openUrl", "saveFile", "onPartial", "forms"}
	for _, target := range []string{"snug", "mcp"} {
		size := func(ms ...string) int { return gzipped(t, variant(t, target, ms...)) }
		full, base := size(all...), size()
		t.Logf("%s: full %d B, base %d B, ask %d B, ask + db %d B, ask + db + forms %d B", target, full, base, size("ask"), size("ask", "db"), size("ask", "db", "forms"))
		for _, m := range all {
			without := size(slices.DeleteFunc(slices.Clone(all), func(x string) bool { return x == m })...)
			t.Logf("%s: %-9s full without it %5d B (-%4d), base with it %5d B (+%4d)", target, m, without, full-without, size(m), size(m)-base)
			if without >= full {
				t.Errorf("%s: the runtime without %s is no smaller (%d B, full %d B)", target, m, without, full)
			}
		}
	}
}

// TestShakenPicksEachVariant: for every file in dist/shaken, Shaken given
// exactly the members its name lists returns that file (as injected), and
// given every member returns the whole runtime.
func TestShakenPicksEachVariant(t *testing.T) {
	entries, err := shaken.ReadDir("dist/shaken")
	if err != nil || len(entries) < 4 {
		t.Fatalf("dist/shaken: %d files, %v", len(entries), err)
	}
	for _, e := range entries {
		target, name, _ := strings.Cut(strings.TrimSuffix(e.Name(), ".js"), "-")
		members := strings.Split(name, "-")
		if name == "base" {
			members = nil
		}
		want, _ := shaken.ReadFile("dist/shaken/" + e.Name())
		if got := variant(t, target, members...); !bytes.Equal(got, Injected(want)) {
			t.Errorf("Shaken(%s, %v) is not %s", target, members, e.Name())
		}
	}
	for target, full := range map[string][]byte{"snug": Script, "mcp": ScriptMCP} {
		if got, _ := Shaken(target, func(string) bool { return true }); !bytes.Equal(got, Injected(full)) {
			t.Errorf("Shaken(%s, every member) is not the whole runtime", target)
		}
	}
}

// TestNoBuildNameLeftFree holds every runtime to the names its build
// resolves: a SNUG_<MEMBER> flag esbuild did not define, or a constant an
// entry used without importing it, would bundle as a free global and throw
// (or, for the codes, know none) only when the page runs.
func TestNoBuildNameLeftFree(t *testing.T) {
	scripts := map[string][]byte{"dist/snug.js": Script, "dist/snug-mcp.js": ScriptMCP, "dist/forms.js": Forms}
	entries, _ := shaken.ReadDir("dist/shaken")
	for _, e := range entries {
		b, err := shaken.ReadFile("dist/shaken/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		scripts["dist/shaken/"+e.Name()] = b
	}
	free := regexp.MustCompile(`\b(SNUG_[A-Z_]+|CODES_[A-Z_]+|TYPE_[A-Z_]+|MAX_BYTES_[A-Z_]+)\b`)
	for name, b := range scripts {
		if m := free.Find(b); m != nil {
			t.Errorf("%s uses %s, a name its build left free", name, m)
		}
	}
}
