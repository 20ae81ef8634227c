package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/ncruces/go-sqlite3"
)

// Functions whose one call could outrun the statement limit.
//
// SQLite checks its interrupt between VM steps (the driver's progress
// handler, every 1000 of them), never inside one call of a function. Most
// builtins do work linear in their arguments, which LIMIT_LENGTH bounds.
// A few do more: instr, replace and the two-argument trims compare a
// pattern at every offset (pattern × text per call: minutes over megabyte
// strings), LIKE and GLOB backtrack over '%' and '*', unhex(X, Y) looks up
// every skipped character of X in Y, the driver's REGEXP searches its
// state set for every state it adds. Each of those is replaced, on every
// connection the store opens (openHardened: the app's, and an import's
// candidate file, whose CHECK constraints integrity_check evaluates), by a
// Go function of the same name and arity with SQLite's exact results
// (TestOverridesMatchSQLite runs a corpus through both): searches are
// linear, and the loops that are not count their work and end the call
// with SQLITE_INTERRUPT once the connection's interrupt context is done, so
// the statement limit, the caller leaving and Close all reach inside the
// call. TestEveryFunctionIsReviewed fails on a function that is neither
// overridden nor in the reviewed list of linear ones (reviewedFunctions),
// so a driver upgrade that adds one fails CI instead of opening a hole.

// workPerCheck is how many units of work (bytes compared, characters
// read) a function does between two looks at its interrupt context: well
// under a millisecond.
const workPerCheck = 1 << 16

// budget counts a call's work and says when its context is done.
type budget struct {
	ctx  context.Context
	work int
}

func newBudget(fctx sqlite3.Context) *budget {
	return &budget{ctx: fctx.Conn().GetInterrupt()}
}

// spend adds n units of work and reports whether the call must stop.
func (b *budget) spend(n int) bool {
	b.work += n
	if b.work < workPerCheck {
		return false
	}
	b.work = 0
	return b.ctx.Err() != nil
}

// errStopped is the result of a call its budget stopped: the statement
// fails with SQLITE_INTERRUPT, which the store answers as the time limit,
// the caller gone, or Close (classify).
var errStopped = fmt.Errorf("%w: the call ran past its time", sqlite3.INTERRUPT)

// override is one function that replaces a builtin of the same name and
// number of arguments.
type override struct {
	name string
	nArg int
	fn   sqlite3.ScalarFunction
}

// overrides are the functions registerOverrides installs.
var overrides = []override{
	{"instr", 2, instrFunc},
	{"replace", 3, replaceFunc},
	{"trim", 2, trimFunc(trimLeft | trimRight)},
	{"ltrim", 2, trimFunc(trimLeft)},
	{"rtrim", 2, trimFunc(trimRight)},
	{"unhex", 2, unhexFunc},
	{"like", 2, likeFunc(likeInfo)},
	{"like", 3, likeFunc(likeInfo)},
	{"glob", 2, likeFunc(globInfo)},
	// The driver's extensions. regexp.c's NFA is states² × text (0.57 s
	// for 10 KB of text and a 180-state pattern): regexp.go's is states ×
	// text, with the budget. decimal_mul is digits² (1.1 s for two
	// 20,000-digit numbers), decimal_pow2(20000) 3.9 s, and neither is a
	// builtin an app can expect of SQLite: refused, with the reason.
	{"regexp", 2, regexpFunc(false)},
	{"regexpi", 2, regexpFunc(true)},
	{"decimal_mul", 2, refused("decimal_mul()", "multiply as REAL or INTEGER, or in the app")},
	{"decimal_pow2", 1, refused("decimal_pow2()", "compute powers of two in the app")},
}

// refused is a function an app may not call: its one call can outrun the
// statement limit and no bounded version of it is kept.
func refused(what, instead string) sqlite3.ScalarFunction {
	err := fmt.Errorf("%s is not available on this host: one call can run for minutes; %s", what, instead)
	return func(fctx sqlite3.Context, _ ...sqlite3.Value) { fctx.ResultError(err) }
}

// registerOverrides installs the overrides on c. They are deterministic
// and innocuous, as the builtins are, so that a schema using them (a
// CHECK constraint, an index on an expression) still opens with
// trusted_schema off.
func registerOverrides(c *sqlite3.Conn) error {
	for _, o := range overrides {
		if err := c.CreateFunction(o.name, o.nArg, sqlite3.DETERMINISTIC|sqlite3.INNOCUOUS, o.fn); err != nil {
			return fmt.Errorf("function %s/%d: %w", o.name, o.nArg, err)
		}
	}
	return nil
}

// isNull reports whether any of vs is NULL.
func isNull(vs ...sqlite3.Value) bool {
	for _, v := range vs {
		if v.Type() == sqlite3.NULL {
			return true
		}
	}
	return false
}

// instrFunc is instr(X, Y): the 1-based position of Y's first occurrence
// in X, in characters unless both are blobs (then bytes), 0 when absent,
// NULL when either is.
func instrFunc(fctx sqlite3.Context, arg ...sqlite3.Value) {
	if isNull(arg...) {
		fctx.ResultNull()
		return
	}
	if arg[0].Type() == sqlite3.BLOB && arg[1].Type() == sqlite3.BLOB {
		p, err := index(newBudget(fctx), string(arg[0].RawBlob()), string(arg[1].RawBlob()), 0)
		resultInt(fctx, p+1, err)
		return
	}
	h, n := arg[0].Text(), arg[1].Text()
	switch {
	case n == "":
		fctx.ResultInt(1)
	case isCont(n[0]):
		// SQLite compares at offset 0 and then only at the start of each
		// character: a needle that starts inside a character matches at 0
		// or nowhere.
		fctx.ResultInt(b2i(strings.HasPrefix(h, n)))
	default:
		p, err := index(newBudget(fctx), h, n, 0)
		if p > 0 {
			p = charsBefore(h, p)
		}
		resultInt(fctx, p+1, err)
	}
}

// resultInt sets n, or the error.
func resultInt(fctx sqlite3.Context, n int, err error) {
	if err != nil {
		fctx.ResultError(err)
		return
	}
	fctx.ResultInt(n)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// isCont reports whether c continues a UTF-8 sequence.
func isCont(c byte) bool { return c&0xc0 == 0x80 }

// charsBefore counts the characters of h before byte p (p > 0, h[p] not a
// continuation byte) as instr counts them: offset 0, then each byte that
// starts a character.
func charsBefore(h string, p int) int {
	n := 1
	for i := 1; i < p; i++ {
		if !isCont(h[i]) {
			n++
		}
	}
	return n
}

// shortNeedle is the longest needle strings.Index searches for: its worst
// case is the needle's length times the text's, and no more.
const shortNeedle = 64

// index is the byte offset of n's first occurrence in h at or after from,
// or -1. It is linear in len(h)+len(n): strings.Index for short needles,
// Knuth-Morris-Pratt with the budget for long ones.
func index(b *budget, h, n string, from int) (int, error) {
	if len(n) <= shortNeedle {
		if i := strings.Index(h[from:], n); i >= 0 {
			return from + i, nil
		}
		return -1, nil
	}
	return kmp(b, h, n, from, prefixTable(n))
}

// prefixTable is Knuth-Morris-Pratt's table for n: t[i] is the length of
// the longest proper prefix of n[:i+1] that is also its suffix.
func prefixTable(n string) []int32 {
	t := make([]int32, len(n))
	k := int32(0)
	for i := 1; i < len(n); i++ {
		for k > 0 && n[i] != n[k] {
			k = t[k-1]
		}
		if n[i] == n[k] {
			k++
		}
		t[i] = k
	}
	return t
}

// kmp finds n in h from offset from, with t = prefixTable(n).
func kmp(b *budget, h, n string, from int, t []int32) (int, error) {
	k := int32(0)
	for i := from; i < len(h); i++ {
		if b.spend(1) {
			return -1, errStopped
		}
		for k > 0 && h[i] != n[k] {
			k = t[k-1]
		}
		if h[i] == n[k] {
			k++
		}
		if int(k) == len(n) {
			return i - len(n) + 1, nil
		}
	}
	return -1, nil
}

// replaceFunc is replace(X, Y, Z): X with every occurrence of Y, left to
// right and not overlapping, replaced by Z, as text. An empty Y (or one
// whose first byte is NUL, as SQLite reads it) returns X as it is.
func replaceFunc(fctx sqlite3.Context, arg ...sqlite3.Value) {
	if isNull(arg[0], arg[1]) {
		fctx.ResultNull()
		return
	}
	s, pat := arg[0].Text(), arg[1].Text()
	if pat == "" || pat[0] == 0 {
		if t := arg[0].Type(); t == sqlite3.INTEGER || t == sqlite3.FLOAT {
			fctx.ResultText(s) // SQLite read it as text, which it stays
		} else {
			fctx.ResultValue(arg[0])
		}
		return
	}
	if isNull(arg[2]) {
		fctx.ResultNull()
		return
	}
	rep := arg[2].Text()
	limit := fctx.Conn().Limit(sqlite3.LIMIT_LENGTH, -1)
	if len(s)+1 > limit {
		fctx.ResultError(sqlite3.TOOBIG)
		return
	}
	out, err := replaceAll(newBudget(fctx), s, pat, rep, limit)
	if err != nil {
		fctx.ResultError(err)
		return
	}
	fctx.ResultText(out)
}

// replaceAll is replace's work: TOOBIG once the result would pass limit
// bytes, as SQLite's check reads.
func replaceAll(b *budget, s, pat, rep string, limit int) (string, error) {
	var t []int32
	if len(pat) > shortNeedle {
		t = prefixTable(pat)
	}
	var out strings.Builder
	grown := len(s)
	for i := 0; ; {
		var p int
		var err error
		if t == nil {
			p, err = index(b, s, pat, i)
		} else {
			p, err = kmp(b, s, pat, i, t)
		}
		if err != nil {
			return "", err
		}
		if p < 0 {
			out.WriteString(s[i:])
			return out.String(), nil
		}
		if len(rep) > len(pat) {
			if grown += len(rep) - len(pat); grown > limit {
				return "", sqlite3.TOOBIG
			}
		}
		out.WriteString(s[i:p])
		out.WriteString(rep)
		i = p + len(pat)
	}
}
