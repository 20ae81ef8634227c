package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ncruces/go-sqlite3"
	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/bytesize"
)

// frameOverhead is what a db-response needs besides its result's columns
// and rows: v, type, a requestId of 128 code points escaped at worst, ok,
// the result's keys, changes and lastInsertRowid.
const frameOverhead = 2048

// resultBudget is the most the columns and rows of a result may take in
// JSON for the db-response to fit its frame.
func resultBudget() int { return frame.MaxDBFrameBytes - frameOverhead }

func sqlErr(format string, a ...any) *Error {
	return &Error{Code: frame.CodeDBSQLError, Message: fmt.Sprintf(format, a...)}
}

// stmtCacheSize is how many prepared app statements each database keeps.
const stmtCacheSize = 32

type cachedStmt struct {
	st      *sqlite3.Stmt
	used    uint64
	inserts []string // the tables it inserts into, its triggers' included (appDB.inserts)
}

// prepare gives a statement for sql: a cached one, or a new one that
// passed the checks (one statement, not VACUUM) and enters the cache. The
// authorizer ran when it was prepared, and runs again whenever SQLite
// prepares it anew after a schema change.
func (d *appDB) prepare(sql string) (*sqlite3.Stmt, error) {
	d.tick++
	if cs := d.stmts[sql]; cs != nil {
		cs.used = d.tick
		d.inserts = append(d.inserts[:0], cs.inserts...)
		return cs.st, nil
	}
	d.inserts = d.inserts[:0]
	st, tail, err := d.conn.Prepare(sql)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, sqlErr("the SQL text holds no statement")
	}
	if !blankSQL(tail) {
		st.Close()
		return nil, sqlErr("the SQL text holds more than one statement: exec runs exactly one; send each statement in its own request")
	}
	if strings.EqualFold(firstWord(sql), "VACUUM") {
		// Refused by the authorizer too (VACUUM attaches), but only once it
		// runs, and inside the write transaction below it would fail first
		// with a less clear message.
		st.Close()
		return nil, sqlErr(vacuumRefused)
	}
	if d.stmts == nil {
		d.stmts = map[string]*cachedStmt{}
	}
	if len(d.stmts) >= stmtCacheSize {
		var oldest string
		var min uint64 = math.MaxUint64
		for k, cs := range d.stmts {
			if cs.used < min {
				oldest, min = k, cs.used
			}
		}
		_ = noPanic(d.stmts[oldest].st.Close) // reports its last step's error
		delete(d.stmts, oldest)
	}
	d.stmts[sql] = &cachedStmt{st: st, used: d.tick, inserts: slices.Clone(d.inserts)}
	return st, nil
}

func (d *appDB) exec(sql string, params []any) (*ExecResult, error) {
	return d.execWith(sql, params, nil)
}

// execWith is exec with, for a statement that writes, once's hooks inside
// its transaction (nil: none).
func (d *appDB) execWith(sql string, params []any, once *onceHooks) (*ExecResult, error) {
	c := d.conn
	d.newFTS = d.newFTS[:0]
	st, err := d.prepare(sql)
	if err != nil {
		return nil, err
	}
	defer func() {
		_ = st.Reset() // repeats the step's error, already handled
		_ = st.ClearBindings()
	}()
	if n := st.BindCount(); n != len(params) {
		return nil, sqlErr("the statement has %d parameters and %d values were given", n, len(params))
	}
	for i, p := range params {
		if err := bindParam(st, i+1, p); err != nil {
			return nil, err
		}
	}

	// A statement that writes runs inside its own transaction, so that a
	// result too large, a timeout or a failed COMMIT leaves nothing behind.
	write := !st.ReadOnly()
	if write {
		if err := d.trustedExec("BEGIN IMMEDIATE"); err != nil {
			return nil, err
		}
	}
	var res *ExecResult
	if write && once != nil {
		err = once.before()
	}
	if err == nil && (once == nil || !*once.done) {
		res, err = d.step(st)
	}
	_ = st.Reset() // done with it before COMMIT or ROLLBACK; repeats step's error
	if write && err == nil && once != nil && !*once.done {
		err = once.after(res)
	}
	if write && err == nil && len(d.newFTS) > 0 {
		err = d.secureDelete()
	}
	if write && err == nil {
		if w := strings.ToUpper(firstWord(sql)); w == "CREATE" || w == "ALTER" {
			err = d.checkSchema()
		}
	}
	if write {
		if err == nil {
			err = d.trustedExec("COMMIT")
		}
		if err != nil && !c.GetAutocommit() {
			// An interrupted call may end here: roll back regardless.
			c.SetInterrupt(context.Background())
			if rerr := d.trustedExec("ROLLBACK"); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// reservedInSchema finds a schema object, other than the kv table, the
// record of writes applied once (once.go) and a replicator's own tables, that is named after the reserved names or whose
// SQL mentions them: a view,
// trigger or foreign key reaching for the kv table, or a table renamed into
// the reserved names (the authorizer sees the old name of an ALTER only).
const reservedInSchema = `SELECT type, name FROM (
	SELECT type, name, tbl_name, sql FROM main.sqlite_schema
	UNION ALL SELECT type, name, tbl_name, sql FROM temp.sqlite_schema)
	WHERE (name LIKE '\_snug\_%' ESCAPE '\' OR tbl_name LIKE '\_snug\_%' ESCAPE '\' OR sql LIKE '%\_snug\_%' ESCAPE '\'
		OR name LIKE '\_litestream\_%' ESCAPE '\' OR tbl_name LIKE '\_litestream\_%' ESCAPE '\' OR sql LIKE '%\_litestream\_%' ESCAPE '\')
	AND NOT (type = 'table' AND name = '_snug_kv' AND sql = ?1)
	AND NOT (type = 'table' AND name = '_snug_once' AND sql = ?2)
	AND NOT (type = 'index' AND name = '_snug_once_at' AND tbl_name = '_snug_once' AND sql = ?3)
	AND NOT (type = 'table' AND name IN ('_litestream_seq', '_litestream_lock')) LIMIT 1`

// checkSchema refuses, inside the statement's transaction, a CREATE or
// ALTER that left the schema reaching for the reserved names: the same
// policy Import applies to a file, so an export always imports again.
func (d *appDB) checkSchema() error {
	d.trusted = true
	defer func() { d.trusted = false }()
	st, _, err := d.conn.Prepare(reservedInSchema)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.BindText(1, kvTable); err != nil {
		return err
	}
	if err := st.BindText(2, onceTable); err != nil {
		return err
	}
	if err := st.BindText(3, onceIndex); err != nil {
		return err
	}
	if st.Step() {
		return sqlErr("%s %q would refer to names starting with %s or %s, which are reserved by the host (kv storage, replication)",
			st.ColumnText(0), st.ColumnText(1), reservedPrefix, replicatorPrefix)
	}
	if err := st.Err(); err != nil {
		return err
	}
	return checkShadowIndexes(d.conn, sqlErr)
}

// step reads the rows of st, counting their JSON size as it goes.
func (d *appDB) step(st *sqlite3.Stmt) (*ExecResult, error) {
	c := d.conn
	c.SetLastInsertRowID(0)
	before := c.TotalChanges()
	// The columns are read after the first step: a statement prepared
	// before a schema change is prepared again inside it, and SELECT *
	// may then have more columns.
	more := st.Step()
	n := st.ColumnCount()
	res := &ExecResult{Columns: make([]string, n), Rows: [][]any{}}
	size := 0
	for i := range n {
		res.Columns[i] = st.ColumnName(i)
		size += jsonStringLen(res.Columns[i]) + 1
	}
	budget := resultBudget()
	for ; more; more = st.Step() {
		row := make([]any, n)
		size += 3 // [ ] ,
		for i := range n {
			var v any
			switch st.ColumnType(i) {
			case sqlite3.INTEGER:
				x := st.ColumnInt64(i)
				v = x
				size += len(strconv.AppendInt(nil, x, 10))
			case sqlite3.FLOAT:
				f := st.ColumnFloat(i)
				switch {
				case math.IsInf(f, 1):
					v = json.Number("1e999")
				case math.IsInf(f, -1):
					v = json.Number("-1e999")
				default:
					v = f
				}
				size += 25 // the longest float64 in JSON
			case sqlite3.TEXT:
				s := st.ColumnText(i)
				v = s
				size += jsonStringLen(s)
			case sqlite3.BLOB:
				b := st.ColumnBlob(i, nil)
				if b == nil {
					b = []byte{}
				}
				v = b
				size += 2 + (len(b)+2)/3*4
			default:
				size += 4
			}
			row[i] = v
			size++ // ,
			if size > budget {
				return nil, &Error{Code: frame.CodeDBResultTooLarge, Message: fmt.Sprintf(
					"the result passed %s after %d rows: it cannot fit the db frame; select fewer rows or columns (LIMIT/OFFSET)",
					bytesize.Text(int64(budget)), len(res.Rows))}
			}
		}
		res.Rows = append(res.Rows, row)
	}
	if err := st.Err(); err != nil {
		return nil, err
	}
	if c.TotalChanges() != before {
		res.Changes = c.Changes()
	}
	res.LastInsertRowid = c.LastInsertRowID()
	return res, nil
}

// trustedExec runs the store's own SQL past the authorizer.
func (d *appDB) trustedExec(sql string) error {
	d.trusted = true
	defer func() { d.trusted = false }()
	return d.conn.Exec(sql)
}

// bindParam binds one JSON scalar. A float64 with an integer value in the
// int64 range binds as INTEGER, as a JavaScript number like 3 means 3.
func bindParam(st *sqlite3.Stmt, i int, p any) error {
	switch v := p.(type) {
	case nil:
		return st.BindNull(i)
	case string:
		return st.BindText(i, v)
	case bool:
		return st.BindBool(i, v)
	case int:
		return st.BindInt64(i, int64(v))
	case int64:
		return st.BindInt64(i, v)
	case float64:
		if v == math.Trunc(v) && v >= -(1<<63) && v < 1<<63 {
			return st.BindInt64(i, int64(v))
		}
		return st.BindFloat(i, v)
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return st.BindInt64(i, n)
		}
		f, err := v.Float64()
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return sqlErr("parameter %d: %q is not a number", i, string(v))
		}
		return st.BindFloat(i, f) // out of range: ±Inf, as JavaScript reads it
	default:
		return sqlErr("parameter %d: a %T is not a JSON scalar (string, number, boolean or null)", i, p)
	}
}

// firstWord is the first word of s after white space, comments and
// semicolons.
func firstWord(s string) string {
	s = s[skipBlank(s):]
	end := 0
	for end < len(s) && (s[end] >= 'a' && s[end] <= 'z' || s[end] >= 'A' && s[end] <= 'Z') {
		end++
	}
	return s[:end]
}

// blankSQL reports whether s holds only white space, comments and semicolons.
func blankSQL(s string) bool { return skipBlank(s) == len(s) }

// skipBlank is the index of the first byte of s that is not white space,
// part of a comment or a semicolon (len(s) when there is none).
func skipBlank(s string) int {
	i := 0
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == ';':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			i += 2
			for i < len(s) && !(s[i] == '*' && i+1 < len(s) && s[i+1] == '/') {
				i++
			}
			i = min(i+2, len(s))
		default:
			return i
		}
	}
	return i
}

// jsonStringLen is the length of s as a JSON string the way encoding/json
// writes it (quotes, escapes, HTML-safe escapes, invalid UTF-8 as \ufffd).
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			n += 6
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += w
		}
		i += w
	}
	return n
}

// script runs the statements of sql in order in one transaction: all of
// them take effect or none (issue 28 item 9: an atomic migration step).
// Each is checked as exec checks one (the authorizer, VACUUM, the schema
// after a CREATE or ALTER); none takes parameters and their rows are not
// returned. Changes add up; lastInsertRowid is the last statement's.
func (d *appDB) script(sql string) (*ExecResult, error) {
	c := d.conn
	d.newFTS = d.newFTS[:0]
	err := d.trustedExec("BEGIN IMMEDIATE")
	var res *ExecResult
	if err == nil {
		res, err = d.scriptSteps(sql)
	}
	if err == nil && len(d.newFTS) > 0 {
		err = d.secureDelete()
	}
	if err == nil {
		err = d.trustedExec("COMMIT")
	}
	if err != nil {
		if !c.GetAutocommit() {
			c.SetInterrupt(context.Background())
			if rerr := d.trustedExec("ROLLBACK"); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		return nil, err
	}
	return res, nil
}

// scriptSteps runs script's statements inside its transaction.
func (d *appDB) scriptSteps(sql string) (*ExecResult, error) {
	total := &ExecResult{Columns: []string{}, Rows: [][]any{}}
	n := 0
	for rest := sql; !blankSQL(rest); n++ {
		d.inserts = d.inserts[:0]
		st, tail, err := d.conn.Prepare(rest)
		if err != nil {
			return nil, err
		}
		if st == nil {
			break
		}
		word := strings.ToUpper(firstWord(rest))
		if word == "VACUUM" {
			st.Close()
			return nil, sqlErr(vacuumRefused)
		}
		r, err := d.step(st)
		st.Close()
		if err != nil {
			return nil, err
		}
		if word == "CREATE" || word == "ALTER" {
			if err := d.checkSchema(); err != nil {
				return nil, err
			}
		}
		total.Changes += r.Changes
		total.LastInsertRowid = r.LastInsertRowid
		rest = tail
	}
	if n == 0 {
		return nil, sqlErr("the SQL text holds no statement")
	}
	return total, nil
}
