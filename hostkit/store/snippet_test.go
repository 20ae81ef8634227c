package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/snuggen/snuggen/frame"
)

// snippetDocs are the rows TestSnippetMatchesFTS5 searches: sentences,
// colons, several columns, empty and NULL columns, unicode, long rows with
// many matches, NULs.
var snippetDocs = [][3]any{
	{"The quick brown fox jumps over the lazy dog.", "A quick note: the dog sleeps.", "fox"},
	{"quick", "", nil},
	{"Lorem ipsum. Dolor sit amet: consectetur quick adipiscing. Elit sed do quick eiusmod quick.", "dog dog dog", "brown"},
	{strings.Repeat("alpha beta gamma. ", 40) + "quick fox" + strings.Repeat(" delta epsilon", 30), "x", "y"},
	{"Ünïcödé quick ñandú: 日本語 fox. Ελληνικά dog", "quick\x00fox", "dog: quick"},
	{strings.Repeat("quick fox ", 50), strings.Repeat("dog. ", 20), "the end"},
	{"no match here", "nor here", "quick brown fox dog"},
	{"\n\tquick\r\n.  :fox\t.dog", ".:. quick", ""},
}

// snippetTable makes the table t of snippetDocs on c.
func snippetTable(t *testing.T, c *sqlite3.Conn) {
	t.Helper()
	if err := c.Exec("CREATE VIRTUAL TABLE t USING fts5(a, b, c)"); err != nil {
		t.Fatal(err)
	}
	st, _, err := c.Prepare("INSERT INTO t(a, b, c) VALUES (?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, row := range snippetDocs {
		for i, v := range row {
			if v == nil {
				err = st.BindNull(i + 1)
			} else {
				err = st.BindText(i+1, v.(string))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Exec(); err != nil {
			t.Fatal(err)
		}
	}
}

// snippetConns returns a store connection and a plain one with fts5's own
// functions, each with the table of snippetDocs.
func snippetConns(t *testing.T) (mine, ref *sqlite3.Conn) {
	t.Helper()
	mine, ref = storeConn(t), sqliteConn(t)
	snippetTable(t, mine)
	snippetTable(t, ref)
	return mine, ref
}

// TestSnippetMatchesFTS5: snippet.go's snippet() returns what fts5's own
// returns, for queries of one and several phrases, every column choice,
// markers and ellipses empty, NULL or with a NUL, and windows from
// negative to longer than the rows; but over a NULL column, where it
// returns ” and fts5 NULL.
func TestSnippetMatchesFTS5(t *testing.T) {
	mine, ref := snippetConns(t)
	const q = "SELECT group_concat(rowid || ':' || typeof(s) || ':' || hex(s), ' ') FROM " +
		"(SELECT rowid, snippet(t, ?, ?, ?, ?, ?) AS s FROM t WHERE t MATCH ? ORDER BY rowid)"
	n := 0
	for _, match := range []string{"quick", "fox OR dog", `"quick brown"`, "qu*", "b : dog", "NEAR(quick fox)", "alpha", "quick AND fox AND dog"} {
		for _, col := range []int64{-1, 0, 1, 2, 5} {
			for _, marks := range [][2]any{{"[", "]"}, {"", ""}, {nil, nil}, {"<b\x00x>", "</b>"}} {
				for _, ell := range []any{"…", "", nil} {
					for _, tokens := range []int64{1, 3, 8, 64, 0, -1, 200} {
						sameAsFTS5(t, mine, ref, q, "snippet", []any{col, marks[0], marks[1], ell, tokens, match})
						n++
					}
				}
			}
		}
	}
	t.Logf("%d queries compared", n)
}

// TestSnippetStopsAtTheLimit: snippet() over a row of 200,000 matches
// (fts5's own: instances², hours) answers DB_TIMEOUT at the limit.
func TestSnippetStopsAtTheLimit(t *testing.T) {
	s := oneRowOfA(t, 200_000)
	start := time.Now()
	_, err := s.Exec(bg, "a", "SELECT length(snippet(d, 0, '[', ']', '…', 64)) FROM d WHERE d MATCH 'a'", nil)
	el := time.Since(start)
	wantCode(t, err, frame.CodeDBTimeout)
	if el > bigRowLimit+slack {
		t.Fatalf("answered after %s, limit %s", el, bigRowLimit)
	}
	t.Logf("DB_TIMEOUT after %s", el)
}

// bigRowLimit is the statement limit oneRowOfA's store runs at.
const bigRowLimit = 300 * time.Millisecond

// oneRowOfA is a store whose app "a" has an fts5 table d holding one row
// of tokens words "a" (made under a long limit), opened again with
// statements limited to bigRowLimit.
func oneRowOfA(t *testing.T, tokens int) *Store {
	t.Helper()
	s, _ := newStore(t, Options{StatementTimeout: time.Minute})
	mustExec(t, s, "a", "CREATE VIRTUAL TABLE d USING fts5(body)")
	mustExec(t, s, "a", fmt.Sprintf("INSERT INTO d(body) VALUES (replace(hex(zeroblob(%d)), '00', 'a '))", tokens))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return openStore(t, s.dir, Options{StatementTimeout: bigRowLimit})
}

// sameAsFTS5 checks that query q (of function fn) answers args through
// mine as through fts5's own (ref). The one difference allowed is row 2's
// NULL column: fts5's answer is NULL, this one ” (the driver's
// Context.ColumnText does not tell NULL from ”).
func sameAsFTS5(t *testing.T, mine, ref *sqlite3.Conn, q, fn string, args []any) {
	t.Helper()
	got, want := evalFunc(t, mine, q, args), evalFunc(t, ref, q, args)
	want = strings.ReplaceAll(want, "2:null:", "2:text:")
	if got != want {
		t.Errorf("%s%v: %s", fn, args, firstDiff(got, want))
	}
}

// firstDiff shows the first row where two snippet results differ.
func firstDiff(got, want string) string {
	g, w := strings.Fields(got), strings.Fields(want)
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("row %s\ngot  %.300s\nfts5 %.300s", strings.SplitN(w[i], ":", 2)[0], g[i], w[i])
		}
	}
	return fmt.Sprintf("%d rows, fts5 %d", len(g), len(w))
}

// TestHighlightMatchesFTS5: snippet.go's highlight() returns what fts5's
// own returns, for every query, column (in range or not) and marker of
// TestSnippetMatchesFTS5; but over a NULL column (” for fts5's NULL).
func TestHighlightMatchesFTS5(t *testing.T) {
	mine, ref := snippetConns(t)
	const q = "SELECT group_concat(rowid || ':' || typeof(s) || ':' || hex(s), ' ') FROM " +
		"(SELECT rowid, highlight(t, ?, ?, ?) AS s FROM t WHERE t MATCH ? ORDER BY rowid)"
	n := 0
	for _, match := range []string{"quick", "fox OR dog", `"quick brown"`, "qu*", "b : dog", "NEAR(quick fox)", "alpha", "quick AND fox AND dog", "a*"} {
		for _, col := range []int64{-1, 0, 1, 2, 3, 5} {
			for _, marks := range [][2]any{{"[", "]"}, {"", ""}, {nil, nil}, {"<b\x00x>", "</b>"}} {
				sameAsFTS5(t, mine, ref, q, "highlight", []any{col, marks[0], marks[1], match})
				n++
			}
		}
	}
	t.Logf("%d queries compared", n)
}

// TestHighlightStopsAtTheLimit: highlight() over a row of 1,000,000
// matches (fts5's own: output², two minutes) answers within the limit,
// with the whole row highlighted, or DB_TIMEOUT at it.
func TestHighlightStopsAtTheLimit(t *testing.T) {
	s := oneRowOfA(t, 1_000_000)
	start := time.Now()
	r, err := s.Exec(bg, "a", "SELECT length(highlight(d, 0, '[', ']')) FROM d WHERE d MATCH 'a'", nil)
	el := time.Since(start)
	if err != nil {
		wantCode(t, err, frame.CodeDBTimeout)
	} else if got := rowsJSON(t, r); got != "[[4000000]]" {
		t.Fatalf("highlighted length %s, want 4000000 (each of 1,000,000 a's bracketed)", got)
	}
	if el > bigRowLimit+slack {
		t.Fatalf("answered after %s, limit %s", el, bigRowLimit)
	}
	t.Logf("%v after %s", err, el)
}
