package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/snuggen/snuggen/frame"
)

// instrBomb was one call of a builtin whose work is quadratic in its
// arguments: SQLite's instr() compares the needle (k bytes of 'a' and a
// 'b') at every offset of the haystack (h bytes of 'a'), about (h-k)·k
// byte comparisons in one VM step, where its interrupt is never checked.
// The store's instr (funcs.go) is linear.
func instrBomb(h, k int) string {
	return fmt.Sprintf("SELECT instr(replace(hex(zeroblob(%d)),'0','a'), replace(hex(zeroblob(%d)),'0','a')||'b')", h/2, k/2)
}

// replaceBomb is the same work through replace(): the pattern is compared
// at every offset and never found.
func replaceBomb(h, k int) string {
	return fmt.Sprintf("SELECT length(replace(replace(hex(zeroblob(%d)),'0','a'), replace(hex(zeroblob(%d)),'0','a')||'b', 'x'))", h/2, k/2)
}

// likeBomb is one call whose work stays h·k however it is done: LIKE
// matches the pattern '%' + k 'a's + 'b' at every offset of h bytes of 'a'
// (k at most the pattern limit), k comparisons each time before the 'b'
// fails. The store's LIKE looks at the statement's interrupt as it goes.
func likeBomb(h, k int) string {
	return fmt.Sprintf("SELECT replace(hex(zeroblob(%d)),'0','a') LIKE '%%' || replace(hex(zeroblob(%d)),'0','a') || 'b'", h/2, k/2)
}

// Sizes for the tests with a lowered limit: one likeBomb call of these
// takes seconds, far past the limit under test.
const bombH, bombK = 4_000_000, maxLikePattern - 4

// slack is what a stopped statement may take past its limit: the function's
// next look at its interrupt plus scheduling on a loaded 2-core machine.
const slack = 1500 * time.Millisecond

// TestFunctionCallStopsAtTheLimit: one builtin call that would run for many
// seconds answers DB_TIMEOUT within the limit and a small slack, for reads
// and writes, and the write leaves nothing behind.
func TestFunctionCallStopsAtTheLimit(t *testing.T) {
	dir := seededDir(t)
	const limit = 300 * time.Millisecond
	s := openStore(t, dir, Options{StatementTimeout: limit})
	glob := strings.NewReplacer("LIKE '%'", "GLOB '*'").Replace(likeBomb(bombH, bombK))
	// An NFA of some 300 states over 2 MB: states × text, seconds.
	regexp := "SELECT replace(hex(zeroblob(1000000)),'0','a') REGEXP '" + strings.Repeat("a?", 150) + "b'"
	for _, q := range []string{
		likeBomb(bombH, bombK),
		glob,
		regexp,
		"INSERT INTO notes(body) " + likeBomb(bombH, bombK),
		"UPDATE notes SET body = " + "(" + likeBomb(bombH, bombK) + ")",
	} {
		start := time.Now()
		_, err := s.Exec(bg, "a", q, nil)
		el := time.Since(start)
		wantCode(t, err, frame.CodeDBTimeout)
		if el > limit+slack {
			t.Fatalf("%.40s…: answered after %s, limit %s", q, el, limit)
		}
		t.Logf("%.40s…: DB_TIMEOUT after %s", q, el)
		// The app's next request works, on what was there before.
		unchanged(t, s, "a")
	}
	mustExec(t, s, "a", "INSERT INTO notes(body) VALUES ('third')")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(t, dir, Options{})
	r := mustExec(t, s2, "a", "SELECT body FROM notes ORDER BY id")
	if got, want := rowsJSON(t, r), `[["first"],["second"],["third"]]`; got != want {
		t.Fatalf("after reopen: %s, want %s", got, want)
	}
}

// TestQuadraticBuiltinsAnswerInTime: the builtins whose SQLite versions do
// text × pattern work in one call (hours at these sizes, run to their end
// inside one VM step) answer at the length limit's sizes, correctly, well
// inside the default limit: funcs.go's versions are linear.
func TestQuadraticBuiltinsAnswerInTime(t *testing.T) {
	s, _ := newStore(t, Options{})
	seed(t, s, "a")
	h, k := (frame.MaxDBFrameBytes-16)/2*2, frame.MaxDBFrameBytes/4
	rep := func(n int, c string) string { return fmt.Sprintf("replace(hex(zeroblob(%d)),'0','%s')", n/2, c) }
	for q, want := range map[string]string{
		instrBomb(h, k):   `[[0]]`,
		replaceBomb(h, k): fmt.Sprintf(`[[%d]]`, h),
		"SELECT instr(" + rep(h, "a") + "||'b', " + rep(k, "a") + "||'b')":        fmt.Sprintf(`[[%d]]`, h-k+1),
		"SELECT length(ltrim(" + rep(h, "a") + ", " + rep(k, "b") + "||'a'))":     `[[0]]`,
		"SELECT length(rtrim(" + rep(h, "a") + ", " + rep(k, "b") + "||'a'))":     `[[0]]`,
		"SELECT length(trim(" + rep(h, "a") + "||'c', " + rep(k, "b") + "||'a'))": `[[1]]`,
		"SELECT length(unhex(" + rep(h, "z") + ", " + rep(k, "y") + "||'z'))":     `[[0]]`,
	} {
		start := time.Now()
		r, err := s.Exec(bg, "a", q, nil)
		el := time.Since(start)
		if err != nil {
			t.Fatalf("%.60s…: %v after %s", q, err, el)
		}
		if got := rowsJSON(t, r); got != want {
			t.Errorf("%.60s… = %s, want %s", q, got, want)
		}
		t.Logf("%.60s…: %s", q, el)
	}
}

// TestFunctionCallBombBlocksNoOtherApp: while one app's call is stuck in a
// builtin, another app's requests are answered at once.
func TestFunctionCallBombBlocksNoOtherApp(t *testing.T) {
	s, _ := newStore(t, Options{StatementTimeout: 2 * time.Second})
	seed(t, s, "a")
	seed(t, s, "b")
	done := make(chan error, 1)
	go func() {
		_, err := s.Exec(bg, "a", likeBomb(bombH, bombK), nil)
		done <- err
	}()
	waitHeld(t, s, "a")
	start := time.Now()
	unchanged(t, s, "b")
	if el := time.Since(start); el > time.Second {
		t.Fatalf("app b waited %s behind app a's statement", el)
	}
	wantCode(t, <-done, frame.CodeDBTimeout)
	unchanged(t, s, "a")
}

// TestDefaultLimitHoldsInsideFunction: with the production defaults, a call
// of the largest size the limits allow (minutes of work) still ends at the
// default statement limit.
func TestDefaultLimitHoldsInsideFunction(t *testing.T) {
	s, _ := newStore(t, Options{})
	seed(t, s, "a")
	start := time.Now()
	// The text at the length limit, the pattern at its own.
	_, err := s.Exec(bg, "a", likeBomb(frame.MaxDBFrameBytes-16, bombK), nil)
	el := time.Since(start)
	wantCode(t, err, frame.CodeDBTimeout)
	if el > DefaultStatementTimeout+slack {
		t.Fatalf("answered after %s, default limit %s", el, DefaultStatementTimeout)
	}
	t.Logf("DB_TIMEOUT after %s", el)
	unchanged(t, s, "a")
}

// TestCloseDuringFunctionBomb: shutting the store down while a call is stuck
// in a builtin returns within about a second, and loses nothing.
func TestCloseDuringFunctionBomb(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{StatementTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s, "a")
	done := make(chan error, 1)
	go func() {
		_, err := s.Exec(bg, "a", "INSERT INTO notes(body) "+likeBomb(bombH*2, bombK), nil)
		done <- err
	}()
	waitHeld(t, s, "a")
	start := time.Now()
	err = s.Close()
	el := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if el > 1500*time.Millisecond {
		t.Fatalf("Close took %s", el)
	}
	t.Logf("Close returned after %s", el)
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("running call: %v", err)
	}
	s2 := openStore(t, dir, Options{})
	unchanged(t, s2, "a")
}

// TestCallerLeavingStopsFunctionBomb: when the caller's context ends (the
// app went away), the stuck call ends too, within the grace.
func TestCallerLeavingStopsFunctionBomb(t *testing.T) {
	s, _ := newStore(t, Options{StatementTimeout: time.Minute})
	seed(t, s, "a")
	ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Exec(ctx, "a", likeBomb(bombH, bombK), nil)
	if el := time.Since(start); el > 200*time.Millisecond+slack {
		t.Fatalf("the call ran %s after its caller left", el)
	}
	var se *Error
	if errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled call: %v", err)
	}
	unchanged(t, s, "a")
}

// checkBombFile writes a small SQLite file whose one row makes PRAGMA
// integrity_check evaluate a CHECK constraint of seconds, and returns its
// bytes.
func checkBombFile(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bomb.db")
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	bomb := "(" + strings.TrimPrefix(likeBomb(bombH*2, bombK), "SELECT ") + ") + x"
	for _, q := range []string{
		"PRAGMA journal_mode=DELETE",
		"PRAGMA ignore_check_constraints=ON",
		"CREATE TABLE t(x INTEGER CHECK (" + bomb + " = x))",
		"INSERT INTO t VALUES (1)",
	} {
		if err := c.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestImportCheckBombIsRefusedInTime: a file of a few KB whose validation
// would evaluate seconds of CHECK constraint is refused at the limit, and
// the old database stays as it was.
func TestImportCheckBombIsRefusedInTime(t *testing.T) {
	data := checkBombFile(t)
	if len(data) > 16<<10 {
		t.Fatalf("the bomb file is %d bytes", len(data))
	}
	const limit = 300 * time.Millisecond
	dir := seededDir(t)
	s := openStore(t, dir, Options{StatementTimeout: limit})
	start := time.Now()
	_, err := s.Import(bg, "a", data)
	el := time.Since(start)
	se := wantCode(t, err, frame.CodeDBImportInvalid)
	if el > limit+slack {
		t.Fatalf("refused after %s, limit %s", el, limit)
	}
	t.Logf("%d-byte file refused after %s: %s", len(data), el, se.Message)
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("left in the data directory: %v", names)
	}
	unchanged(t, s, "a")
}

// TestLikePatternLimit: a LIKE or GLOB pattern past maxLikePattern is an
// SQL error at once, not seconds of matching; a search-box pattern works.
func TestLikePatternLimit(t *testing.T) {
	s, _ := newStore(t, Options{})
	seed(t, s, "a")
	long := strings.Repeat("%a", maxLikePattern/2+1)
	for _, q := range []string{
		"SELECT count(*) FROM notes WHERE body LIKE ?",
		"SELECT count(*) FROM notes WHERE body GLOB ?",
	} {
		_, err := s.Exec(bg, "a", q, []any{long})
		se := wantCode(t, err, frame.CodeDBSQLError)
		if !strings.Contains(se.Message, "pattern") {
			t.Errorf("%s: message %q", q, se.Message)
		}
	}
	r := mustExec(t, s, "a", "SELECT body FROM notes WHERE body LIKE ?", "%ir%")
	if got := rowsJSON(t, r); got != `[["first"]]` {
		t.Fatalf("LIKE '%%ir%%' = %s", got)
	}
}

// waitHeld waits until a call holds app's database: a quick call of app's
// own cannot get in.
func waitHeld(t *testing.T, s *Store, app string) {
	t.Helper()
	for {
		ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
		_, err := s.Exec(ctx, app, "SELECT 1", nil)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// jsonPathsBomb is one json_extract call walking the stored array (a
// 1,000,000-element array, about 7 MB) once for each of paths paths.
func jsonPathsBomb(paths int) string {
	return "SELECT length(json_extract((SELECT a FROM big)" + strings.Repeat(", '$[#-1]'", paths) + "))"
}

// TestJSONPathsStayNearTheLimit: the json functions walk their document
// once per path inside one call; with at most 127 arguments such a call
// ends about a second past the limit at worst (999 paths ran 6.6 s past a
// 300 ms one), and a call with more arguments is the app's SQL error.
func TestJSONPathsStayNearTheLimit(t *testing.T) {
	dir := seededDir(t)
	s0 := openStore(t, dir, Options{StatementTimeout: time.Minute})
	mustExec(t, s0, "a", "CREATE TABLE big AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000) SELECT json_group_array(x) AS a FROM c")
	if err := s0.Close(); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir, Options{StatementTimeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := s.Exec(bg, "a", jsonPathsBomb(maxFunctionArgs-1), nil)
	el := time.Since(start)
	if err != nil {
		wantCode(t, err, frame.CodeDBTimeout)
	}
	// About a second past the limit on the development machine at the
	// length limit's scale (the residual docs/security.md records); twice
	// the slack leaves room for a slower one.
	if el > 300*time.Millisecond+2*slack {
		t.Fatalf("answered after %s (%v), limit 300ms", el, err)
	}
	t.Logf("%d paths: %v after %s", maxFunctionArgs-1, err, el)
	_, err = s.Exec(bg, "a", "SELECT json_array("+strings.TrimSuffix(strings.Repeat("1,", maxFunctionArgs+1), ",")+")", nil)
	if e := wantCode(t, err, frame.CodeDBSQLError); !strings.Contains(e.Message, "too many arguments") {
		t.Errorf("%d arguments: %q", maxFunctionArgs+1, e.Message)
	}
}
