package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"
	"github.com/snuggen/snuggen/frame"
)

// reviewedFunctions are the functions of a store connection that are
// neither overridden nor refused (funcs.go), as name/number of arguments
// (-1: any), by family, each with why one call cannot outrun the statement
// limit. A function the driver adds fails TestEveryFunctionIsReviewed
// until someone reads it and puts it here or in overrides.
var reviewedFunctions = map[string][]string{
	// Constant work on numbers.
	"math": {"abs/1", "acos/1", "acosh/1", "asin/1", "asinh/1", "atan/1", "atan2/2", "atanh/1",
		"ceil/1", "ceiling/1", "cos/1", "cosh/1", "degrees/1", "exp/1", "floor/1", "ln/1", "log/1",
		"log/2", "log10/1", "log2/1", "mod/2", "pi/0", "pow/2", "power/2", "radians/1", "random/0",
		"round/1", "round/2", "sign/1", "sin/1", "sinh/1", "sqrt/1", "tan/1", "tanh/1", "trunc/1"},
	// One pass over the arguments (each at most LIMIT_LENGTH); the
	// one-argument trims strip one character, spaces.
	"text and blobs": {"base64/1", "char/-1", "concat/-3", "concat_ws/-4", "format/-1", "hex/1",
		"length/1", "lower/1", "ltrim/1", "octet_length/1", "printf/-1", "quote/1", "randomblob/1",
		"rtrim/1", "soundex/1", "substr/2", "substr/3", "substring/2", "substring/3", "trim/1",
		"typeof/1", "subtype/1", "unhex/1", "unicode/1", "unistr/1", "unistr_quote/1", "upper/1",
		"zeroblob/1"},
	// Pick or report one value, or the connection's state.
	"control and state": {"changes/0", "coalesce/-4", "if/-4", "ifnull/2", "iif/-4",
		"last_insert_rowid/0", "likelihood/2", "likely/1", "max/-3", "min/-3", "nullif/2",
		"sqlite_compileoption_get/1", "sqlite_compileoption_used/1", "sqlite_log/2",
		"sqlite_source_id/0", "sqlite_version/0", "total_changes/0", "unlikely/1"},
	// One pass over the format and the value.
	"dates": {"current_date/0", "current_time/0", "current_timestamp/0", "date/-1", "datetime/-1",
		"julianday/-1", "strftime/-1", "time/-1", "timediff/2", "unixepoch/-1"},
	// Called once per row: each call is a VM step, between which SQLite
	// looks at the interrupt.
	"aggregates and windows": {"avg/1", "count/0", "count/1", "cume_dist/0", "decimal_sum/1",
		"dense_rank/0", "first_value/1", "geopoly_group_bbox/1", "group_concat/1", "group_concat/2",
		"json_group_array/1", "json_group_object/2", "jsonb_group_array/1", "jsonb_group_object/2",
		"lag/1", "lag/2", "lag/3", "last_value/1", "lead/1", "lead/2", "lead/3", "max/1", "min/1",
		"nth_value/2", "ntile/1", "percent_rank/0", "rank/0", "row_number/0", "string_agg/2",
		"sum/1", "total/1"},
	// One parse of the document, then one walk per path argument: linear in
	// the document times the arguments (LIMIT_FUNCTION_ARG). docs/security.md
	// records the worst case measured.
	"json": {"json/1", "json_array/-1", "json_array_insert/-1", "json_array_length/1",
		"json_array_length/2", "json_error_position/1", "json_extract/-1", "json_insert/-1",
		"json_object/-1", "json_patch/2", "json_pretty/1", "json_pretty/2", "json_quote/1",
		"json_remove/-1", "json_replace/-1", "json_set/-1", "json_type/1", "json_type/2",
		"json_valid/1", "json_valid/2", "jsonb/1", "jsonb_array/-1", "jsonb_array_insert/-1",
		"jsonb_extract/-1", "jsonb_insert/-1", "jsonb_object/-1", "jsonb_patch/2",
		"jsonb_remove/-1", "jsonb_replace/-1", "jsonb_set/-1"},
	// Linear in the digits (decimal_add of 1,000,000 digits: 30 ms); the
	// quadratic ones are refused.
	"decimal": {"decimal/1", "decimal/2", "decimal_add/2", "decimal_cmp/2", "decimal_exp/1",
		"decimal_exp/2", "decimal_sub/2"},
	// Constant work on one double.
	"ieee754": {"ieee754/1", "ieee754/2", "ieee754_exponent/1", "ieee754_from_blob/1",
		"ieee754_from_int/1", "ieee754_inc/2", "ieee754_mantissa/1", "ieee754_to_blob/1",
		"ieee754_to_int/1"},
	// The modules' helpers; bm25 runs through the fts5 table, once per
	// row, linear in the row's matches; snippet and highlight are
	// snippet.go's (fts5's own are instances² and output²); match only errs outside a
	// MATCH; rtreecheck runs SQL statements of its own, which SQLite
	// interrupts.
	"fts5 and rtree": {"bm25/-1", "fts5/1", "fts5_get_locale/-1", "fts5_insttoken/1",
		"fts5_locale/2", "fts5_source_id/0", "highlight/-1", "match/2", "snippet/-1",
		"rtreecheck/-1", "rtreedepth/1", "rtreenode/2"},
	// O(vertices) per polygon (a blob or JSON text, at most LIMIT_LENGTH);
	// geopoly_regular makes at most 1,000.
	"geopoly": {"geopoly_area/1", "geopoly_bbox/1", "geopoly_blob/1", "geopoly_ccw/1",
		"geopoly_contains_point/3", "geopoly_debug/1", "geopoly_json/1", "geopoly_overlap/2",
		"geopoly_regular/4", "geopoly_svg/-1", "geopoly_within/2", "geopoly_xform/7"},
	// Operators' functions SQLite declares.
	"operators": {"->/2", "->>/2"},
}

// storeConn opens a connection the way the store opens one.
func storeConn(t testing.TB) *sqlite3.Conn {
	t.Helper()
	c, err := openHardened(filepath.Join(t.TempDir(), "f.db"), Options{
		MaxMemoryBytes: DefaultMaxMemoryBytes, QuotaBytes: 1 << 30, StatementTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// sqliteConn is the reference the overrides are compared with: a plain
// connection, SQLite's own functions (fts5's too), with the store's length
// and pattern limits.
func sqliteConn(t testing.TB) *sqlite3.Conn {
	t.Helper()
	c, err := sqlite3.Open(":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	c.Limit(sqlite3.LIMIT_LIKE_PATTERN_LENGTH, maxLikePattern)
	c.Limit(sqlite3.LIMIT_LENGTH, frame.MaxDBFrameBytes)
	if err := fts5.Register(c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEveryFunctionIsReviewed: each function of a store connection is
// overridden (funcs.go) or in reviewedFunctions, and each override is in
// place (registered on the connection, not the builtin alone).
func TestEveryFunctionIsReviewed(t *testing.T) {
	c := storeConn(t)
	reviewed := map[string]bool{}
	for _, names := range reviewedFunctions {
		for _, n := range names {
			reviewed[n] = true
		}
	}
	overridden := map[string]bool{}
	for _, o := range overrides {
		overridden[fmt.Sprintf("%s/%d", o.name, o.nArg)] = true
	}
	st, _, err := c.Prepare("SELECT name, narg, builtin FROM pragma_function_list")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seen, registered := map[string]bool{}, map[string]bool{}
	for st.Step() {
		key := fmt.Sprintf("%s/%d", st.ColumnText(0), st.ColumnInt(1))
		seen[key] = true
		if st.ColumnInt(2) == 0 {
			registered[key] = true
		}
		if !reviewed[key] && !overridden[key] {
			t.Errorf("function %s is neither overridden (funcs.go) nor reviewed as linear (reviewedFunctions): "+
				"read what one call of it costs and add it to one of them", key)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	for key := range overridden {
		if !registered[key] {
			t.Errorf("override %s is not registered on the connection", key)
		}
	}
	for key := range reviewed {
		if !seen[key] {
			t.Errorf("reviewed function %s no longer exists: drop it from reviewedFunctions", key)
		}
	}
}

// corpus is what TestOverridesMatchSQLite passes to each override: NULL,
// numbers, blobs, and text with case, wildcards, escapes, classes, NULs,
// multi-byte and invalid UTF-8.
var corpus = []any{
	nil, int64(0), int64(12345), int64(-7), 1.5, 1e20,
	"", "a", "A", "abc", "aBc", "ABC", "abcabc", "xxabcxx", "  x  ", " ", "ab", "ba", "b",
	"%", "_", "a%", "%c", "a_c", "%b%", "A%C", "%%", "a%%c", "_%_", "\\", "\\%", "a\\%c", "x\\_y",
	"*", "?", "a*", "*c", "a?c", "[abc]", "[a-c]*", "*[^x]", "[^a]bc", "[]]", "[^]]*", "x]y", "[a-]",
	"[-a]", "[z-a]", "[", "a[", "[é-ü]*", "*[ä]*",
	"é", "É", "ñandú", "Ünïcödé", "日本語", "本", "😀x😀", "e\u0301",
	"a\x00b", "\x00", "ab\x00cd",
	"\xff", "\xc3", "\xc3(", "\x80abc", "a\x80", "\xe6\x97", "\xf0\x9f\x98", "\xc0\x80", "\xed\xa0\x80",
	"0a1B", "0a 1b", "0a-1b", "a 1", "zz", "-", " -", "ab\x00cd",
	[]byte{}, []byte{0}, []byte("abc"), []byte("b"), []byte("\xc3\xa9"), []byte{0xff, 0x80},
}

// TestOverridesMatchSQLite: each override returns what SQLite's builtin of
// the same name returns, with the same type, or fails where it fails, for
// every combination of the corpus.
func TestOverridesMatchSQLite(t *testing.T) {
	mine, ref := storeConn(t), sqliteConn(t)
	thirds := map[string][]any{
		"replace": {nil, "", "X", "yy", int64(5), []byte("A")},
		"like":    {nil, "", "\\", "%", "_", "ab", "é", "x", []byte("\\"), int64(1)},
	}
	n := 0
	for _, o := range overrides {
		if isRefused(o) {
			continue
		}
		call := o.name + "(?" + strings.Repeat(", ?", o.nArg-1) + ")"
		q := "SELECT typeof(r), hex(r) FROM (SELECT " + call + " AS r)"
		third := []any{nil}
		if o.nArg == 3 {
			third = thirds[o.name]
		}
		for _, a := range corpus {
			for _, b := range corpus {
				for _, c := range third {
					args := []any{a, b, c}[:o.nArg]
					got, want := evalFunc(t, mine, q, args), evalFunc(t, ref, q, args)
					if got != want {
						t.Errorf("%s with %q: got %s, SQLite %s", call, args, got, want)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d calls compared", n)
}

// isRefused reports whether o is one of the refused extension functions.
func isRefused(o override) bool {
	return strings.HasPrefix(o.name, "decimal_")
}

// evalFunc runs q with args on c: the result's type and hex, or "error".
func evalFunc(t testing.TB, c *sqlite3.Conn, q string, args []any) string {
	t.Helper()
	st, _, err := c.Prepare(q)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case nil:
			err = st.BindNull(i + 1)
		case int64:
			err = st.BindInt64(i+1, v)
		case float64:
			err = st.BindFloat(i+1, v)
		case string:
			err = st.BindText(i+1, v)
		case []byte:
			err = st.BindBlob(i+1, v)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !st.Step() {
		if err := st.Err(); err != nil {
			return "error"
		}
		return "no row"
	}
	return st.ColumnText(0) + " " + st.ColumnText(1)
}

// TestRefusedFunctions: the extension functions with no bounded version
// are an SQL error that says why and what to use.
func TestRefusedFunctions(t *testing.T) {
	s, _ := newStore(t, Options{})
	seed(t, s, "a")
	for _, q := range []string{"SELECT decimal_mul('1.5', '2')", "SELECT decimal_pow2(10)"} {
		_, err := s.Exec(bg, "a", q, nil)
		se := wantCode(t, err, frame.CodeDBSQLError)
		if !strings.Contains(se.Message, "not available on this host") {
			t.Errorf("%s: %q", q, se.Message)
		}
	}
}

// TestRegexpMatchesSQLite: regexp() and regexpi() answer as regexp.c's
// (the driver's extension, on a plain connection) for patterns of every
// construct and error it knows, against text with case, digits, spaces,
// words, multi-byte and invalid UTF-8 and NULs.
func TestRegexpMatchesSQLite(t *testing.T) {
	mine, ref := storeConn(t), sqliteConn(t)
	patterns := []any{nil, "", "a", "abc", "^abc", "abc$", "^abc$", "a|b", "ab|cd|", "(ab)+", "(a|aa)*c",
		"a*", "a+b", "a?b", "x*", ".", ".*", "a.c", ".*foo", "foo.*bar", "a{2}", "a{2,3}", "a{0,2}b",
		"a{2,}", "a{0}", "a{3,1}", "a{", "a{1", "a{x}", "a{1000}", "{2}", "*a", "+a", "?a", "(", ")", "(a",
		"a)", "[abc]", "[^abc]", "[a-c]+", "[^0-9]", "[a\\]]b", "[\\-a]", "[a-]", "[]", "[", "[[:alpha:]]",
		"\\d+", "\\D", "\\w+\\s\\W", "\\S+", "\\bfoo\\b", "\\Bx", "\\.", "\\\\", "\\t", "\\u00e9", "\\u00E9",
		"\\x41", "\\xZZ", "\\q", "\\", "é+", "[é-ü]", "日本", "ABC", "[A-Z]+", "\\x61", "a$b", "^$", "$",
		"^", "^^a", "a^", "foo\x00bar", "\xff", "\xc3", "abcdefghijklmnop", "x|", "|x", "((a))", "(a)(b)?c",
	}
	texts := []any{nil, "", "a", "abc", "ABC", "xabcx", "aaab", "aaac", "aac", "cd", "xyz123", "123",
		"foo bar", "foobar", "foo  bar", "a.c", "a\\b", "\t", "é", "Éé", "ü", "日本語", "a\nb", "ab\x00c",
		"\xff\xfe", "\xc3", "\x80abc", "abcdefghijklmnopq", "a]b", "-", "aa", "aaa", "b", int64(12), []byte("abc")}
	for _, fn := range []string{"regexp", "regexpi"} {
		q := "SELECT typeof(r), hex(r) FROM (SELECT " + fn + "(?, ?) AS r)"
		for _, p := range patterns {
			for _, s := range texts {
				args := []any{p, s}
				if got, want := evalFunc(t, mine, q, args), evalFunc(t, ref, q, args); got != want {
					t.Errorf("%s(%q, %q): got %s, regexp.c %s", fn, p, s, got, want)
				}
			}
		}
	}
	// The compiled pattern kept across a statement's rows.
	q := "SELECT group_concat(value REGEXP '^[a-c]+$', '') AS r FROM json_each('[\"abc\",\"abd\",\"\",\"cab\"]')"
	if got, want := evalFunc(t, mine, "SELECT typeof(r), r FROM ("+q+")", nil), "text 1001"; got != want {
		t.Errorf("over rows: %s, want %s", got, want)
	}
}

// FuzzOverridesMatchSQLite: for any arguments the fuzzer makes, each
// overridden builtin (regexp and regexpi included) answers what SQLite's
// own answers on a plain connection. go test runs the seeds; for more:
// go test -run '^$' -fuzz FuzzOverridesMatchSQLite -fuzztime 5m ./hostkit/store
func FuzzOverridesMatchSQLite(f *testing.F) {
	f.Add(uint8(0), "abcabc", "bc", "x", uint8(0))
	f.Add(uint8(1), "aaaa", "aa", "b", uint8(0))
	f.Add(uint8(2), "xxhixx", "x", "", uint8(0))
	f.Add(uint8(5), "0a1B", "aB", "", uint8(0x01))
	f.Add(uint8(6), "a%b_c", "A%B\\_C", "\\", uint8(0))
	f.Add(uint8(8), "[a-c]*?", "abc", "", uint8(0x10))
	f.Add(uint8(9), "(a|aa)*c", "aaac", "", uint8(0))
	f.Add(uint8(3), "é日本", "本é", "", uint8(0x2a))
	mine, ref := storeConn(f), sqliteConn(f)
	var fns []override
	for _, o := range overrides {
		if !isRefused(o) {
			fns = append(fns, o)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, a, b, c string, kinds uint8) {
		o := fns[int(which)%len(fns)]
		args := []any{fuzzArg(a, kinds), fuzzArg(b, kinds>>2), fuzzArg(c, kinds>>4)}[:o.nArg]
		q := "SELECT typeof(r), hex(r) FROM (SELECT " + o.name + "(?" + strings.Repeat(", ?", o.nArg-1) + ") AS r)"
		if got, want := evalFunc(t, mine, q, args), evalFunc(t, ref, q, args); got != want {
			t.Errorf("%s%q: got %s, SQLite %s", o.name, args, got, want)
		}
	})
}

// fuzzArg is s as text, a blob, NULL or an integer, by kind's low two bits.
func fuzzArg(s string, kind uint8) any {
	switch kind & 3 {
	case 1:
		return []byte(s)
	case 2:
		return nil
	case 3:
		return int64(len(s)) - 3
	}
	return s
}
