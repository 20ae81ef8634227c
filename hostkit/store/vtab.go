package store

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"
	"github.com/ncruces/go-sqlite3/ext/rtree"

	"github.com/snuggen/snuggen/frame"
)

// Virtual tables.
//
// An app may create virtual tables of the modules in
// frame.SQLVirtualTableModules (the rules file's SQL_VIRTUAL_TABLE_MODULES):
// fts5 (full-text search, with its bm25, highlight and snippet functions),
// fts5vocab (the terms of an fts5 index) and rtree/rtree_i32 (R*Tree). They
// are SQLite's own modules, built into the driver, fuzzed upstream, and
// their code runs in the connection's capped Wasm memory under the same
// time limit as any statement. The authorizer refuses every other module
// (geopoly, registered with rtree, and generate_series are not on the list)
// with a message naming the allowed ones.
//
// A module keeps its data in shadow tables (fts5: x_data, x_idx,
// x_content, x_docsize, x_config; rtree: x_node, x_rowid, x_parent), plain
// tables of the app's own file: they count against the quota, travel with
// Export and are checked by Import's integrity check, which runs each
// module's own consistency check. An app reads them like any table but
// writes them only through the module: defensive mode (DBCONFIG_DEFENSIVE)
// makes SQLite refuse an INSERT, UPDATE or DELETE, a DROP, an ALTER or a
// trigger on a shadow table in a statement the app wrote, while the
// module's own statements, prepared from inside the virtual table, still
// write them. (The authorizer cannot draw that line: a module's statement
// reaches it with the same action and names as the app's.) The schema check
// after every CREATE refuses an index on a shadow table, which SQLite
// allows and which would let an app make the module's own writes fail.

// secureDelete turns on fts5's secure-delete option for the fts5 tables the
// running statement created, inside its transaction. By default fts5
// records a delete as a new index segment, merged away later: in a
// database at its quota every DELETE (and every DELETE on a table whose
// triggers keep an external-content index) then fails, and the app cannot
// delete rows to make room. With secure-delete fts5 removes the entries in
// place: deletes need no new pages and free them (measured in
// TestFTS5Quota).
func (d *appDB) secureDelete() error {
	d.trusted = true
	defer func() { d.trusted = false }()
	for _, t := range d.newFTS {
		schema, name := quoteIdent(t[0]), quoteIdent(t[1])
		sql := fmt.Sprintf("INSERT INTO %s.%s(%s, rank) VALUES ('secure-delete', 1)", schema, name, name)
		if err := d.conn.Exec(sql); err != nil {
			return fmt.Errorf("fts5 table %s: secure-delete: %w", t[1], err)
		}
	}
	return nil
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// registerModules adds the allowed modules' code to a connection.
func registerModules(c *sqlite3.Conn) error {
	// snippet.go's snippet() and highlight() replace fts5's own, whose one
	// call is instances² (snippet) or output² (highlight) of the row.
	err := fts5.RegisterCustom(c, func(api *fts5.API) error {
		if err := api.CreateFunction("snippet", snippetFunc(c)); err != nil {
			return err
		}
		return api.CreateFunction("highlight", highlightFunc(c))
	})
	if err != nil {
		return fmt.Errorf("register fts5: %w", err)
	}
	if err := rtree.Register(c); err != nil {
		return fmt.Errorf("register rtree: %w", err)
	}
	return nil
}

// allowedModule reports whether an app may create a virtual table of module
// (SQLite matches module names without regard to case).
func allowedModule(module string) bool {
	return slices.ContainsFunc(frame.SQLVirtualTableModules, func(m string) bool { return strings.EqualFold(m, module) })
}

// allowedModules names the allowed modules for a message.
func allowedModules() string {
	return strings.Join(frame.SQLVirtualTableModules, ", ")
}

func moduleRefused(module string) string {
	return fmt.Sprintf("virtual table module %q is refused by the host: only %s are allowed "+
		"(fts5 for full-text search with bm25, highlight and snippet; rtree for R*Tree range queries)", module, allowedModules())
}

// shadowRefusal matches SQLite's defensive-mode refusals of a statement that
// reaches into a shadow table.
var shadowRefusal = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:table \S+ may not be (?:modified|dropped|altered)|cannot create triggers on shadow tables|may not write to shadow table \S+)$`)
})

// unsafeUse matches SQLite's refusal, with trusted_schema off, of a
// function or virtual table in a view or trigger that is not marked
// innocuous (fts5's highlight, snippet and bm25; fts5vocab).
var unsafeUse = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`unsafe use of \S+$`) })

// explain adds to SQLite's refusals around virtual tables what the app
// should do instead; other messages come back as they are.
func explain(msg string) string {
	switch {
	case shadowRefusal().MatchString(msg):
		return msg + ": it is a shadow table, the storage of a virtual table (fts5 or rtree), which the module alone writes; " +
			"change the data through the virtual table (INSERT, UPDATE or DELETE on it, or an fts5 command such as " +
			"INSERT INTO t(t) VALUES('rebuild'))"
	case unsafeUse().MatchString(msg):
		return msg + ": a view or trigger may not use it (the host runs SQLite with trusted_schema off); use it in the query itself"
	}
	return msg
}

// shadowIndexes finds an index or trigger on a shadow table: the app's
// statements cannot make a trigger there (defensive mode), nor an index
// (the schema check), and an imported file may hold neither.
const shadowIndexes = `SELECT s.type, s.name, s.tbl_name FROM (
	SELECT 'main' AS db, type, name, tbl_name, sql FROM main.sqlite_schema
	UNION ALL SELECT 'temp', type, name, tbl_name, sql FROM temp.sqlite_schema) s
	JOIN pragma_table_list t ON t.schema = s.db AND t.name = s.tbl_name
	WHERE t.type = 'shadow' AND s.type IN ('index', 'trigger') AND s.sql IS NOT NULL LIMIT 1`

// checkShadowIndexes refuses an index or trigger on a shadow table.
func checkShadowIndexes(c *sqlite3.Conn, refuse func(format string, a ...any) *Error) error {
	st, _, err := c.Prepare(shadowIndexes)
	if err != nil {
		return err
	}
	defer st.Close()
	if st.Step() {
		return refuse("%s %q is on %q, a shadow table of a virtual table, which only its module may change",
			st.ColumnText(0), st.ColumnText(1), st.ColumnText(2))
	}
	return st.Err()
}

// virtualTables lists the virtual tables of the main schema of c, with
// the SQL that created them.
func virtualTables(c *sqlite3.Conn) (names, sqls []string, err error) {
	st, _, err := c.Prepare(`SELECT s.name, coalesce(s.sql, '') FROM main.sqlite_schema s
		JOIN pragma_table_list t ON t.schema = 'main' AND t.name = s.name
		WHERE t.type = 'virtual' AND s.type = 'table'`)
	if err != nil {
		return nil, nil, err
	}
	for st.Step() {
		names = append(names, st.ColumnText(0))
		sqls = append(sqls, st.ColumnText(1))
	}
	return names, sqls, errors.Join(st.Err(), st.Close())
}

// moduleOf reads the module a CREATE VIRTUAL TABLE statement names, with
// SQLite's own parser: the statement is prepared (never run) on an empty
// in-memory database whose authorizer records the module of the
// CREATE_VTABLE check. A file's schema is read by the same parser, so a
// name spelt in comments, quotes or odd case cannot mean one module here
// and another when the file is opened.
func moduleOf(scratch *sqlite3.Conn, sql string) (string, error) {
	module, seen := "", false
	if err := scratch.SetAuthorizer(func(action sqlite3.AuthorizerActionCode, name3, name4, schema, inner string) sqlite3.AuthorizerReturnCode {
		if action == sqlite3.AUTH_CREATE_VTABLE && !seen {
			module, seen = name4, true
		}
		return sqlite3.AUTH_OK
	}); err != nil {
		return "", err
	}
	st, _, err := scratch.Prepare(sql)
	if st != nil {
		err = errors.Join(err, st.Close())
	}
	if !seen {
		return "", fmt.Errorf("not a CREATE VIRTUAL TABLE statement (%v)", err)
	}
	return module, nil
}

// checkModules refuses a file holding a virtual table of a module that is
// not allowed, and lists its fts5 tables.
func checkModules(c *sqlite3.Conn) (fts []string, err error) {
	names, sqls, err := virtualTables(c)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	scratch, err := sqlite3.Open(":memory:")
	if err != nil {
		return nil, err
	}
	defer scratch.Close()
	for i, name := range names {
		module, err := moduleOf(scratch, sqls[i])
		if err != nil {
			return nil, importErr("the schema's virtual table %q cannot be read: %v", name, err)
		}
		if !allowedModule(module) {
			return nil, importErr("the schema holds virtual table %q of module %q: only %s are allowed", name, module, allowedModules())
		}
		if strings.EqualFold(module, "fts5") {
			fts = append(fts, name)
		}
	}
	return fts, nil
}

// errDamagedIndex is an fts5 table whose docsize records do not decode.
var errDamagedIndex = errors.New("its docsize records do not decode")

// checkFTS5 checks, in an import's candidate file, the fts5 tables that
// keep no text of their own (contentless and external-content tables):
// there PRAGMA integrity_check reads the index's structure only and
// cannot compare it with any text. fts5's integrity-check with rank 1
// compares an external-content index with its content table; the docsize
// records, which a search ranked by bm25 reads, are decoded here. An
// external-content index that does not match its content table is rebuilt
// from it (the content table is the app's data, checked like any table,
// and the index is derived from it); a contentless one cannot be, and the
// file is refused.
func checkFTS5(c *sqlite3.Conn, tables []string) error {
	for _, name := range tables {
		own, err := hasShadow(c, name, "content")
		if err != nil {
			return err
		}
		if own {
			continue // its own text: PRAGMA integrity_check compared the index with it
		}
		q := quoteIdent(name)
		err = c.Exec(fmt.Sprintf("INSERT INTO %s(%s, rank) VALUES ('integrity-check', 1)", q, q))
		if err == nil {
			err = checkDocsize(c, name)
		}
		if !errors.Is(err, errDamagedIndex) && !errors.Is(err, sqlite3.CORRUPT) {
			return err
		}
		damage := strings.TrimPrefix(err.Error(), "sqlite3: ")
		err = c.Exec(fmt.Sprintf("INSERT INTO %s(%s) VALUES ('rebuild')", q, q))
		var code sqlite3.ErrorCode
		if errors.As(err, &code) && code == sqlite3.ERROR {
			return importErr("full-text table %q: its index is damaged (%s) and it keeps no text to rebuild it from; "+
				"drop it, create it again and insert its rows, then export again", name, damage)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// hasShadow reports whether virtual table name has the shadow table
// name_suffix.
func hasShadow(c *sqlite3.Conn, name, suffix string) (bool, error) {
	st, _, err := c.Prepare(`SELECT 1 FROM pragma_table_list WHERE schema = 'main' AND type = 'shadow' AND name = ?`)
	if err != nil {
		return false, err
	}
	defer st.Close()
	if err := st.BindText(1, name+"_"+suffix); err != nil {
		return false, err
	}
	found := st.Step()
	return found, st.Err()
}

// checkDocsize decodes fts5 table name's docsize records as fts5 does:
// each holds one varint per column, nothing more.
func checkDocsize(c *sqlite3.Conn, name string) error {
	if ok, err := hasShadow(c, name, "docsize"); err != nil || !ok {
		return err // columnsize=0: none kept
	}
	st, _, err := c.Prepare(fmt.Sprintf(`SELECT (SELECT count(*) FROM pragma_table_info(?)), sz FROM %s`, quoteIdent(name+"_docsize")))
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.BindText(1, name); err != nil {
		return err
	}
	for st.Step() {
		if varints(st.ColumnRawBlob(1)) != st.ColumnInt(0) {
			return errDamagedIndex
		}
	}
	return st.Err()
}

// varints counts the SQLite varints that make up b exactly, or is -1.
func varints(b []byte) int {
	n := 0
	for i := 0; i < len(b); n++ {
		j := i
		for j < len(b) && j-i < 8 && b[j]&0x80 != 0 {
			j++
		}
		if j == len(b) {
			return -1 // the last varint runs past the end
		}
		i = j + 1
	}
	return n
}
