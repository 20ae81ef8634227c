package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/snuggen/snuggen/frame"
)

// ftsNotes makes the notes table, its fts5 index kept by triggers (the
// external-content pattern of SQLite's documentation, the way a model
// writes it) and a few notes.
func ftsNotes(t testing.TB, s *Store, app string) {
	t.Helper()
	for _, sql := range []string{
		"CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT)",
		"CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, content='notes', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')",
		"CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN INSERT INTO notes_fts(rowid, title, body) VALUES (new.id, new.title, new.body); END",
		"CREATE TRIGGER notes_ad AFTER DELETE ON notes BEGIN INSERT INTO notes_fts(notes_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body); END",
		"CREATE TRIGGER notes_au AFTER UPDATE ON notes BEGIN INSERT INTO notes_fts(notes_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body); INSERT INTO notes_fts(rowid, title, body) VALUES (new.id, new.title, new.body); END",
	} {
		mustExec(t, s, app, sql)
	}
	mustExec(t, s, app, "INSERT INTO notes(title, body) VALUES (?, ?), (?, ?), (?, ?)",
		"Groceries", "milk, eggs and a café crème",
		"Running", "ran 5 km along the river; running shoes are worn",
		"Books", "a river runs through it, and other stories")
}

// ftsIntact checks the fts5 index against its content and the notes.
func ftsIntact(t testing.TB, s *Store, app string, notes int) {
	t.Helper()
	mustExec(t, s, app, "INSERT INTO notes_fts(notes_fts, rank) VALUES ('integrity-check', 1)")
	if r := mustExec(t, s, app, "SELECT count(*) FROM notes"); rowsJSON(t, r) != fmt.Sprintf("[[%d]]", notes) {
		t.Fatalf("notes: %s, want %d", rowsJSON(t, r), notes)
	}
	if r := mustExec(t, s, app, "PRAGMA integrity_check"); rowsJSON(t, r) != `[["ok"]]` {
		t.Fatalf("integrity_check: %s", rowsJSON(t, r))
	}
}

func TestFTS5Search(t *testing.T) {
	s, _ := newStore(t, Options{})
	ftsNotes(t, s, "a")

	// A search as an app writes it: MATCH with a prefix, best first by
	// bm25, the hits marked by highlight and cut out by snippet.
	r := mustExec(t, s, "a", `SELECT n.id, n.title, highlight(notes_fts, 0, '<b>', '</b>') AS t,
		snippet(notes_fts, 1, '[', ']', '…', 6) AS snip, bm25(notes_fts) AS score
		FROM notes_fts JOIN notes n ON n.id = notes_fts.rowid
		WHERE notes_fts MATCH ? ORDER BY rank`, "run*")
	if want := []string{"id", "title", "t", "snip", "score"}; strings.Join(r.Columns, ",") != strings.Join(want, ",") {
		t.Fatalf("columns %v", r.Columns)
	}
	if len(r.Rows) != 2 {
		t.Fatalf("rows %s: want the two notes about running", rowsJSON(t, r))
	}
	// "Running" matches in the title and twice in the body: it ranks first.
	if r.Rows[0][1] != "Running" || r.Rows[0][2] != "<b>Running</b>" || r.Rows[1][1] != "Books" {
		t.Fatalf("ranking %s", rowsJSON(t, r))
	}
	if snip := r.Rows[0][3].(string); !strings.Contains(snip, "[ran]") && !strings.Contains(snip, "[running]") {
		t.Fatalf("snippet %q marks no hit", snip)
	}
	if snip := r.Rows[1][3].(string); snip != "a river [runs] through it, and…" {
		t.Fatalf("snippet %q", snip)
	}
	if a, b := r.Rows[0][4].(float64), r.Rows[1][4].(float64); !(a < b && b < 0) {
		t.Fatalf("bm25 %v, %v: want both negative, the better match lower", a, b)
	}
	// The tokenizer folds diacritics; phrase and column filters work.
	if r := mustExec(t, s, "a", "SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'cafe'"); rowsJSON(t, r) != "[[1]]" {
		t.Fatalf("cafe: %s", rowsJSON(t, r))
	}
	if r := mustExec(t, s, "a", `SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'title:books OR "worn shoes"'`); rowsJSON(t, r) != "[[3]]" {
		t.Fatalf("column filter: %s", rowsJSON(t, r))
	}
	// The triggers keep the index in step with the table.
	mustExec(t, s, "a", "UPDATE notes SET body = 'oat milk' WHERE id = 1")
	mustExec(t, s, "a", "DELETE FROM notes WHERE id = 3")
	if r := mustExec(t, s, "a", "SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'eggs OR river OR oat'"); rowsJSON(t, r) != "[[1],[2]]" {
		t.Fatalf("after update and delete: %s", rowsJSON(t, r))
	}
	// A syntax error in a MATCH is the app's DB_SQL_ERROR.
	_, err := s.Exec(bg, "a", "SELECT * FROM notes_fts WHERE notes_fts MATCH ?", []any{`"unclosed`})
	wantCode(t, err, frame.CodeDBSQLError)

	// The module's commands run through the virtual table.
	for _, cmd := range []string{"rebuild", "optimize", "integrity-check"} {
		mustExec(t, s, "a", "INSERT INTO notes_fts(notes_fts) VALUES (?)", cmd)
	}
	mustExec(t, s, "a", "INSERT INTO notes_fts(notes_fts, rank) VALUES ('merge', 500)")
	mustExec(t, s, "a", "INSERT INTO notes_fts(notes_fts, rank) VALUES ('rank', 'bm25(10.0, 1.0)')")
	ftsIntact(t, s, "a", 2)

	// fts5vocab reads the index's terms.
	mustExec(t, s, "a", "CREATE VIRTUAL TABLE notes_terms USING fts5vocab(notes_fts, row)")
	if r := mustExec(t, s, "a", "SELECT term, doc FROM notes_terms WHERE term LIKE 'ri%'"); rowsJSON(t, r) != `[["river",1]]` {
		t.Fatalf("vocab: %s", rowsJSON(t, r))
	}
	// A contentless table and a plain one with a trigram tokenizer.
	mustExec(t, s, "a", "CREATE VIRTUAL TABLE tags USING fts5(tag, content='', tokenize='trigram')")
	mustExec(t, s, "a", "INSERT INTO tags(rowid, tag) VALUES (1, 'gardening'), (2, 'guarded')")
	if r := mustExec(t, s, "a", "SELECT rowid FROM tags WHERE tags MATCH 'arde' ORDER BY rowid"); rowsJSON(t, r) != "[[1],[2]]" {
		t.Fatalf("trigram: %s", rowsJSON(t, r))
	}
	// Dropping a virtual table drops its shadow tables.
	mustExec(t, s, "a", "DROP TABLE tags")
	if r := mustExec(t, s, "a", "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'tags%'"); rowsJSON(t, r) != "[[0]]" {
		t.Fatalf("after DROP: %s", rowsJSON(t, r))
	}
}

func TestRTree(t *testing.T) {
	s, _ := newStore(t, Options{})
	mustExec(t, s, "a", "CREATE VIRTUAL TABLE places USING rtree(id, min_lat, max_lat, min_lon, max_lon, +name TEXT)")
	mustExec(t, s, "a", "INSERT INTO places VALUES (1, 47.36, 47.38, 8.53, 8.55, 'Zürich HB'), (2, 48.13, 48.15, 11.55, 11.58, 'München'), (3, 47.37, 47.37, 8.54, 8.54, 'Bahnhofstrasse')")
	r := mustExec(t, s, "a", "SELECT name FROM places WHERE min_lat >= ? AND max_lat <= ? AND min_lon >= ? AND max_lon <= ? ORDER BY id", 47.0, 48.0, 8.0, 9.0)
	if rowsJSON(t, r) != `[["Zürich HB"],["Bahnhofstrasse"]]` {
		t.Fatalf("range query: %s", rowsJSON(t, r))
	}
	mustExec(t, s, "a", "CREATE VIRTUAL TABLE cells USING rtree_i32(id, x0, x1)")
	mustExec(t, s, "a", "INSERT INTO cells VALUES (1, 0, 10)")
	if r := mustExec(t, s, "a", "SELECT rtreecheck('places'), rtreecheck('cells')"); rowsJSON(t, r) != `[["ok","ok"]]` {
		t.Fatalf("rtreecheck: %s", rowsJSON(t, r))
	}
	// The module's own limit: at most five dimensions.
	_, err := s.Exec(bg, "a", "CREATE VIRTUAL TABLE big USING rtree(id, a0, a1, b0, b1, c0, c1, d0, d1, e0, e1, f0, f1)", nil)
	se := wantCode(t, err, frame.CodeDBSQLError)
	if !strings.Contains(se.Message, "Too many columns") {
		t.Fatalf("message %q", se.Message)
	}
}

func TestVirtualTableRefusals(t *testing.T) {
	s, _ := newStore(t, Options{})
	ftsNotes(t, s, "a")
	mustExec(t, s, "a", "CREATE VIRTUAL TABLE box USING rtree(id, x0, x1)")
	mustExec(t, s, "a", "INSERT INTO box VALUES (1, 0, 1)")
	if err := s.KVSet(bg, "a", "prefs", json.RawMessage(`{"theme":"dark"}`)); err != nil {
		t.Fatal(err)
	}

	cases := []struct{ name, sql, msg string }{
		// Modules off the list, named in the message with what is allowed.
		{"generate_series", "CREATE VIRTUAL TABLE v USING generate_series", `module "generate_series" is refused by the host: only fts5, fts5vocab, rtree, rtree_i32 are allowed`},
		{"geopoly", "CREATE VIRTUAL TABLE v USING geopoly(a)", `"geopoly" is refused`},
		{"csv", "CREATE VIRTUAL TABLE v USING csv(filename='/etc/passwd')", `"csv" is refused`},
		{"fts4", "CREATE VIRTUAL TABLE v USING fts4(a)", `"fts4" is refused`},
		{"dbstat", "CREATE VIRTUAL TABLE v USING dbstat", `"dbstat" is refused`},
		{"odd spelling", `CREATE /* fts5 */ VIRTUAL TABLE "fts5" USING "GeoPoly"(a)`, `"GeoPoly" is refused`},
		{"temp schema", "CREATE VIRTUAL TABLE temp.v USING generate_series", `"generate_series" is refused`},

		// Shadow tables: read like any table, written only by the module.
		{"insert _data", "INSERT INTO notes_fts_data VALUES (99, x'00')", "notes_fts_data may not be modified: it is a shadow table"},
		{"insert _idx", "INSERT INTO notes_fts_idx VALUES (0, x'', 9)", "may not be modified"},
		{"delete _content", "DELETE FROM notes_fts_docsize", "may not be modified"},
		{"update _config", "UPDATE notes_fts_config SET v = 0", "may not be modified"},
		{"replace _docsize", "REPLACE INTO notes_fts_docsize VALUES (1, x'01')", "may not be modified"},
		{"rtree _node", "UPDATE box_node SET data = x'00'", "box_node may not be modified"},
		{"rtree _rowid", "DELETE FROM box_rowid", "may not be modified"},
		{"rtree _parent", "INSERT INTO box_parent VALUES (7, 1)", "may not be modified"},
		{"drop shadow", "DROP TABLE notes_fts_idx", "may not be dropped"},
		{"alter shadow", "ALTER TABLE box_node RENAME TO n2", "may not be altered"},
		{"alter shadow column", "ALTER TABLE notes_fts_data ADD COLUMN x", "may not be altered"},
		{"trigger on shadow", "CREATE TRIGGER t AFTER INSERT ON notes_fts_data BEGIN SELECT 1; END", "cannot create triggers on shadow tables"},
		{"index on shadow", "CREATE UNIQUE INDEX i ON notes_fts_docsize(sz)", `index "i" is on "notes_fts_docsize", a shadow table`},
		{"temp index on shadow", "CREATE INDEX temp_i ON box_parent(parentnode)", `a shadow table`},
		{"trigger writing a shadow", "CREATE TRIGGER sneak AFTER INSERT ON notes BEGIN DELETE FROM notes_fts_data; END", `may not write to shadow table "notes_fts_data": it is a shadow table`},

		// The reserved names, reached through a module.
		{"content is kv", "CREATE VIRTUAL TABLE peek USING fts5(key, value, content='_snug_kv')", "reserved"},
		{"vocab of kv", "CREATE VIRTUAL TABLE peek USING fts5vocab(_snug_kv, row)", "reserved"},
		{"vocab of kv, temp", "CREATE VIRTUAL TABLE temp.peek USING fts5vocab(main, _snug_kv, row)", "reserved"},
		{"shadow named reserved", "CREATE VIRTUAL TABLE _snug USING fts5(a)", "reserved"},
		{"shadow named reserved, rtree", "CREATE VIRTUAL TABLE _SNUG USING rtree(id, a, b)", "reserved"},
		{"rename into reserved", "ALTER TABLE notes_fts RENAME TO _snug_x", "reserved"},
		{"vtab named reserved", "CREATE VIRTUAL TABLE _snug_kv2 USING fts5(a)", "reserved"},

		// Names a module would need that are taken.
		{"shadow name taken", "CREATE VIRTUAL TABLE notes USING fts5(a)", "already exists"},
		// Hostile arguments are the module's to refuse.
		{"unknown tokenizer", "CREATE VIRTUAL TABLE x USING fts5(a, tokenize='evil')", "tokenize"},
		{"bad command", "INSERT INTO notes_fts(notes_fts) VALUES ('drop-everything')", ""},
	}
	for _, c := range cases {
		_, err := s.Exec(bg, "a", c.sql, nil)
		se := wantCode(t, err, frame.CodeDBSQLError)
		if !strings.Contains(se.Message, c.msg) {
			t.Errorf("%s: message %q, want it to hold %q", c.name, se.Message, c.msg)
		}
		t.Logf("%-30s -> %s", c.name, se.Message)
	}
	// A rank function is looked up among fts5's auxiliary functions only,
	// when a ranked query runs: naming another function just fails.
	mustExec(t, s, "a", "INSERT INTO notes_fts(notes_fts, rank) VALUES ('rank', 'load_extension(''/tmp/evil.so'')')")
	_, err := s.Exec(bg, "a", "SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'river' ORDER BY rank", nil)
	se := wantCode(t, err, frame.CodeDBSQLError)
	if !strings.Contains(se.Message, "no such function: load_extension") {
		t.Errorf("rank load_extension: %q", se.Message)
	}
	mustExec(t, s, "a", "INSERT INTO notes_fts(notes_fts, rank) VALUES ('rank', 'bm25()')")

	// Nothing of it is left: no schema change, the index and the kv intact.
	if r := mustExec(t, s, "a", "SELECT group_concat(name) FROM sqlite_schema WHERE name IN ('v', 'i', 't', 'sneak', 'peek', 'x') OR name LIKE '\\_snug%' ESCAPE '\\' AND name <> '_snug_kv'"); rowsJSON(t, r) != "[[null]]" {
		t.Fatalf("leftovers: %s", rowsJSON(t, r))
	}
	ftsIntact(t, s, "a", 3)
	if v, found, err := s.KVGet(bg, "a", "prefs"); err != nil || !found || string(v) != `{"theme":"dark"}` {
		t.Fatalf("kv: %s %v %v", v, found, err)
	}
	// With trusted_schema off, MATCH and fts5's auxiliary functions (not
	// marked innocuous) stay out of views and triggers: the message says
	// where they go. The fts5 and rtree tables themselves may be used
	// there (the triggers of ftsNotes write notes_fts).
	for _, v := range []struct{ sql, what string }{
		{"CREATE VIEW hits AS SELECT rowid, highlight(notes_fts, 1, '[', ']') AS h FROM notes_fts", "highlight()"},
		{"CREATE VIEW hits AS SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'river'", "MATCH()"},
	} {
		mustExec(t, s, "a", v.sql)
		_, err = s.Exec(bg, "a", "SELECT * FROM hits", nil)
		if se := wantCode(t, err, frame.CodeDBSQLError); !strings.Contains(se.Message, "unsafe use of "+v.what+": a view or trigger may not use it") {
			t.Errorf("view with %s: %q", v.what, se.Message)
		}
		mustExec(t, s, "a", "DROP VIEW hits")
	}
	mustExec(t, s, "a", "CREATE VIEW titles AS SELECT rowid, title FROM notes_fts")
	if r := mustExec(t, s, "a", "SELECT count(*) FROM titles"); rowsJSON(t, r) != "[[3]]" {
		t.Errorf("view over fts5: %s", rowsJSON(t, r))
	}
	mustExec(t, s, "a", "DROP VIEW titles")

	// Reading a shadow table is allowed: it is the app's own data.
	mustExec(t, s, "a", "SELECT count(*) FROM notes_fts_data")
	mustExec(t, s, "a", "SELECT * FROM box_node")
}

func TestFTS5Quota(t *testing.T) {
	// A plain fts5 table, and notes whose index triggers keep (the
	// external-content pattern): each is filled to the quota by inserts of
	// distinct words. The failed insert leaves nothing and the index stays
	// sound; deleting rows then makes room, in batches as an app does.
	for _, c := range []struct{ name, make, insert, table string }{
		{"fts5 table", "CREATE VIRTUAL TABLE docs USING fts5(body)", "INSERT INTO docs(body) VALUES (?)", "docs"},
		{"external content with triggers", "", "INSERT INTO notes(title, body) VALUES ('t', ?)", "notes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, dir := newStore(t, Options{QuotaBytes: 256 << 10})
			search := "docs"
			if c.make != "" {
				mustExec(t, s, "a", c.make)
			} else {
				ftsNotes(t, s, "a")
				mustExec(t, s, "a", "DELETE FROM notes")
				search = "notes_fts"
			}
			words := func(i int) string {
				var b strings.Builder
				for j := range 60 {
					fmt.Fprintf(&b, "w%dx%d ", i, j)
				}
				return b.String()
			}
			ok := 0
			for ; ; ok++ {
				if ok > 2000 {
					t.Fatal("the quota never stopped the inserts")
				}
				if _, err := s.Exec(bg, "a", c.insert, []any{words(ok)}); err != nil {
					se := wantCode(t, err, frame.CodeDBQuotaExceeded)
					t.Logf("after %d inserts: %s", ok, se.Message)
					break
				}
			}
			if ok < 10 {
				t.Fatalf("only %d inserts went in", ok)
			}
			count := func(match string) string {
				t.Helper()
				return rowsJSON(t, mustExec(t, s, "a", fmt.Sprintf("SELECT count(*) FROM %s WHERE %s MATCH ?", search, search), match))
			}
			mustExec(t, s, "a", fmt.Sprintf("INSERT INTO %s(%s) VALUES ('integrity-check')", search, search))
			if r := mustExec(t, s, "a", "SELECT count(*) FROM "+c.table); rowsJSON(t, r) != fmt.Sprintf("[[%d]]", ok) {
				t.Fatalf("rows %s, want %d", rowsJSON(t, r), ok)
			}
			if got := count(fmt.Sprintf("w%dx59", ok-1)); got != "[[1]]" {
				t.Fatalf("the last insert: %s", got)
			}
			if got := count(fmt.Sprintf("w%dx0", ok)); got != "[[0]]" {
				t.Fatalf("the failed insert is searchable: %s", got)
			}
			info, err := os.Stat(filepath.Join(dir, "a.db"))
			if err != nil || info.Size() > 256<<10 {
				t.Fatalf("file %v %v", info.Size(), err)
			}
			// The full database deletes: half of the rows, ten at a time.
			for k := 0; k < ok/2; k += 10 {
				mustExec(t, s, "a", fmt.Sprintf("DELETE FROM %s WHERE rowid IN (SELECT rowid FROM %s ORDER BY rowid LIMIT 10)", c.table, c.table))
			}
			if got := count("w0x0"); got != "[[0]]" {
				t.Fatalf("a deleted row is still found: %s", got)
			}
			// And there is room again.
			more := 0
			for ; more < ok; more++ {
				if _, err := s.Exec(bg, "a", c.insert, []any{words(ok + more)}); err != nil {
					wantCode(t, err, frame.CodeDBQuotaExceeded)
					break
				}
			}
			t.Logf("after deleting %d of %d rows, %d more went in", ok/2, ok, more)
			if more == 0 {
				t.Fatalf("after deleting %d of %d rows, no insert went in", ok/2, ok)
			}
			mustExec(t, s, "a", fmt.Sprintf("INSERT INTO %s(%s) VALUES ('integrity-check')", search, search))
			if got := count(fmt.Sprintf("w%dx1", ok+more-1)); got != "[[1]]" {
				t.Fatalf("the insert after the deletes: %s", got)
			}
		})
	}
}

func TestFTS5ExportImport(t *testing.T) {
	s, _ := newStore(t, Options{})
	ftsNotes(t, s, "a")
	mustExec(t, s, "a", "CREATE VIRTUAL TABLE box USING rtree(id, x0, x1)")
	mustExec(t, s, "a", "INSERT INTO box VALUES (1, 0, 1), (2, 5, 6)")
	data, err := s.Export(bg, "a")
	if err != nil {
		t.Fatal(err)
	}
	// The file opens in any SQLite with fts5 (here, the driver alone).
	if _, err := s.Import(bg, "b", data); err != nil {
		t.Fatalf("import of an export with fts5 and rtree: %v", err)
	}
	ftsIntact(t, s, "b", 3)
	if r := mustExec(t, s, "b", "SELECT rowid FROM notes_fts WHERE notes_fts MATCH 'river' ORDER BY rank"); rowsJSON(t, r) != "[[3],[2]]" {
		t.Fatalf("search after import: %s", rowsJSON(t, r))
	}
	if r := mustExec(t, s, "b", "SELECT id FROM box WHERE x0 >= 4"); rowsJSON(t, r) != "[[2]]" {
		t.Fatalf("rtree after import: %s", rowsJSON(t, r))
	}
	// Writes through the module still work, direct ones are still refused.
	mustExec(t, s, "b", "INSERT INTO notes(title, body) VALUES ('New', 'imported river')")
	ftsIntact(t, s, "b", 4)
	_, err = s.Exec(bg, "b", "DELETE FROM notes_fts_data", nil)
	wantCode(t, err, frame.CodeDBSQLError)

	// A file made by another program holding an fts5 table goes in too.
	other := rawDB(t, "CREATE VIRTUAL TABLE docs USING fts5(body)", "INSERT INTO docs VALUES ('made elsewhere'), ('second doc')")
	if _, err := s.Import(bg, "c", other); err != nil {
		t.Fatalf("import of an fts5 file: %v", err)
	}
	if r := mustExec(t, s, "c", "SELECT highlight(docs, 0, '[', ']') FROM docs WHERE docs MATCH 'elsewhere'"); rowsJSON(t, r) != `[["made [elsewhere]"]]` {
		t.Fatalf("search after import: %s", rowsJSON(t, r))
	}
}

// rawFTS builds a file with an fts5 table and then runs tamper on a plain
// connection (no defensive mode), as a hostile file's author would.
func rawFTS(t *testing.T, tamper ...string) []byte {
	t.Helper()
	return rawDB(t, append([]string{
		"CREATE VIRTUAL TABLE docs USING fts5(body)",
		"INSERT INTO docs(body) SELECT 'word' || value || ' common' FROM generate_series(1, 200)",
	}, tamper...)...)
}

func TestImportVirtualTablesMalicious(t *testing.T) {
	s, _ := newStore(t, Options{})
	seed(t, s, "a")
	writable := "PRAGMA writable_schema = ON"
	cases := []struct {
		name, msg string
		data      []byte
	}{
		{"fts5 without its shadow tables", "damaged", rawDB(t, writable,
			"INSERT INTO sqlite_schema VALUES ('table', 'v', 'v', 0, 'CREATE VIRTUAL TABLE v USING fts5(a)')")},
		{"module off the list", `"v" of module "geopoly"`, rawDB(t, writable,
			"INSERT INTO sqlite_schema VALUES ('table', 'v', 'v', 0, 'CREATE VIRTUAL TABLE v USING geopoly(a)')")},
		{"unknown module", `module "csv"`, rawDB(t, writable,
			"INSERT INTO sqlite_schema VALUES ('table', 'v', 'v', 0, 'CREATE VIRTUAL TABLE v USING csv(filename=''/etc/passwd'')')")},
		{"module hidden behind comments and quotes", `module "generate_series"`, rawDB(t, writable,
			"INSERT INTO sqlite_schema VALUES ('table', 'USING fts5', 'USING fts5', 0, 'CREATE /*USING fts5*/ VIRTUAL TABLE \"USING fts5\" USING [generate_series]')")},
		{"index on a shadow table", `index "i" is on "docs_docsize"`, rawFTS(t, "CREATE INDEX i ON docs_docsize(sz)")},
		{"trigger on a shadow table", `trigger "tr" is on "docs_data"`, rawFTS(t,
			"CREATE TABLE log(x)", "CREATE TRIGGER tr AFTER INSERT ON docs_data BEGIN INSERT INTO log VALUES (new.id); END")},
		{"tampered index", "integrity check failed", rawFTS(t, "DELETE FROM docs_data WHERE id > 10")},
		{"tampered content", "integrity check failed", rawFTS(t, "UPDATE docs_content SET c0 = 'other text' WHERE id = 5")},
		{"tampered config", "", rawFTS(t, "UPDATE docs_config SET v = 99 WHERE k = 'version'")},
		{"rtree tampered", "integrity check failed", rawDB(t, "CREATE VIRTUAL TABLE r USING rtree(id, a, b)",
			"INSERT INTO r SELECT value, value, value + 1 FROM generate_series(1, 100)", "DELETE FROM r_rowid WHERE rowid > 50")},
		{"shadow table named reserved", "reserved", rawDB(t, "CREATE VIRTUAL TABLE _snug USING fts5(a)")},
		{"content is kv", "reserved", rawDB(t, kvTable, "CREATE VIRTUAL TABLE peek USING fts5(key, value, content='_snug_kv')")},
	}
	for _, c := range cases {
		_, err := s.Import(bg, "a", c.data)
		se := wantCode(t, err, frame.CodeDBImportInvalid)
		if !strings.Contains(se.Message, c.msg) {
			t.Errorf("%s: message %q, want it to hold %q", c.name, se.Message, c.msg)
		}
		t.Logf("%-42s -> %s", c.name, se.Message)
		unchanged(t, s, "a")
	}
	// The untampered file goes in.
	if _, err := s.Import(bg, "a", rawFTS(t)); err != nil {
		t.Fatal(err)
	}
	if r := mustExec(t, s, "a", "SELECT count(*) FROM docs WHERE docs MATCH 'common'"); rowsJSON(t, r) != "[[200]]" {
		t.Fatal(rowsJSON(t, r))
	}
}

func TestFTS5TimeLimit(t *testing.T) {
	// Built with the default limit; then searched and rebuilt under a
	// short one.
	dir := t.TempDir()
	s0, err := Open(dir, Options{StatementTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, s0, "a", "CREATE VIRTUAL TABLE docs USING fts5(body)")
	mustExec(t, s0, "a", `INSERT INTO docs(body) SELECT 'alpha' || (value % 5000) || ' beta' || (value % 97) || ' gamma' || value
		FROM generate_series(1, 200000)`)
	if err := s0.Close(); err != nil {
		t.Fatal(err)
	}
	const limit = 100 * time.Millisecond
	s := openStore(t, dir, Options{StatementTimeout: limit})
	for _, sql := range []string{
		// One call of the module does all the work of these.
		"INSERT INTO docs(docs) VALUES ('rebuild')",
		"SELECT count(*) FROM docs WHERE docs MATCH 'NEAR(alpha* gamma*, 50)'",
		// A search that matches every row, read to the end.
		"SELECT count(*), sum(length(h)) FROM (SELECT highlight(docs, 0, '<', '>') AS h FROM docs WHERE docs MATCH 'a* OR b* OR g*' ORDER BY rank)",
	} {
		start := time.Now()
		_, err := s.Exec(bg, "a", sql, nil)
		el := time.Since(start)
		wantCode(t, err, frame.CodeDBTimeout)
		t.Logf("%s: stopped after %s", sql, el)
		if el > limit+5*time.Second {
			t.Errorf("%s ran %s past a limit of %s", sql, el, limit)
		}
	}
	// The index is intact.
	if r := mustExec(t, s, "a", "SELECT count(*) FROM docs WHERE docs MATCH 'gamma200000'"); rowsJSON(t, r) != "[[1]]" {
		t.Fatal(rowsJSON(t, r))
	}
}

// TestModuleOf reads modules the way SQLite does.
func TestModuleOf(t *testing.T) {
	scratch, err := sqlite3.Open(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer scratch.Close()
	for sql, want := range map[string]string{
		"CREATE VIRTUAL TABLE v USING fts5(a)":                                "fts5",
		"create virtual table if not exists main.v using FTS5 (a, b)":         "FTS5",
		`CREATE VIRTUAL TABLE "using rtree" USING "geopoly"(a)`:               "geopoly",
		"CREATE/*x*/VIRTUAL--y\nTABLE [v] USING `rtree_i32`(id, a, b)":        "rtree_i32",
		"CREATE VIRTUAL TABLE v USING csv(filename='x'); CREATE TABLE t(a)":   "csv",
		"CREATE VIRTUAL TABLE v USING generate_series":                        "generate_series",
		"CREATE VIRTUAL TABLE v USING fts5vocab('main', 'CREATE', 'row') -- ": "fts5vocab",
	} {
		got, err := moduleOf(scratch, sql)
		if err != nil || got != want {
			t.Errorf("moduleOf(%q) = %q, %v; want %q", sql, got, err, want)
		}
	}
	if got, err := moduleOf(scratch, "CREATE TABLE t(a)"); err == nil {
		t.Errorf("a plain table read as module %q", got)
	}
}
