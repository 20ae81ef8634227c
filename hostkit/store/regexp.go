package store

import (
	"bytes"
	"errors"
	"strings"

	"github.com/ncruces/go-sqlite3"
)

// REGEXP and regexpi(), as SQLite's ext/misc/regexp.c (which the driver
// embeds) compiles and matches them: the same syntax, errors, NFA and
// limits (a pattern of at most LIMIT_LIKE_PATTERN_LENGTH bytes, an NFA of
// at most 75 + half that many states). The C matcher does states² work a
// character (0.57 s for 10 KB of text and a 180-state pattern, minutes at
// the length limit, in one call); this one keeps each state set with a
// mark a state (states a character) and spends the budget of funcs.go.
// TestRegexpMatchesSQLite compares the two.

// The NFA's opcodes (regexp.c's RE_OP_*).
const (
	reMatch = iota + 1
	reAny
	reAnyStar
	reFork
	reGoto
	reAccept
	reCCInc
	reCCExc
	reCCValue
	reCCRange
	reWord
	reNotWord
	reDigit
	reNotDigit
	reSpace
	reNotSpace
	reBoundary
	reAtStart
)

const (
	reEOF   = 0         // end of input
	reStart = 0xfffffff // start of input: larger than any character
)

// reInput is text read one character at a time.
type reInput struct {
	z     []byte
	i, mx int
}

// nextChar is re_next_char: UTF-8 decoded as regexp.c decodes it.
func (p *reInput) nextChar() int {
	if p.i >= p.mx {
		return 0
	}
	z := p.z
	c := int(z[p.i])
	p.i++
	if c < 0x80 {
		return c
	}
	switch {
	case c&0xe0 == 0xc0 && p.i < p.mx && isCont(z[p.i]):
		c = (c&0x1f)<<6 | int(z[p.i]&0x3f)
		p.i++
		if c < 0x80 {
			c = 0xfffd
		}
	case c&0xf0 == 0xe0 && p.i+1 < p.mx && isCont(z[p.i]) && isCont(z[p.i+1]):
		c = (c&0x0f)<<12 | int(z[p.i]&0x3f)<<6 | int(z[p.i+1]&0x3f)
		p.i += 2
		if c <= 0x7ff || c >= 0xd800 && c <= 0xdfff {
			c = 0xfffd
		}
	case c&0xf8 == 0xf0 && p.i+2 < p.mx && isCont(z[p.i]) && isCont(z[p.i+1]) && isCont(z[p.i+2]):
		c = (c&0x07)<<18 | int(z[p.i]&0x3f)<<12 | int(z[p.i+1]&0x3f)<<6 | int(z[p.i+2]&0x3f)
		p.i += 3
		if c <= 0xffff || c > 0x10ffff {
			c = 0xfffd
		}
	default:
		c = 0xfffd
	}
	return c
}

// next is re_next_char, or re_next_char_nocase (ASCII folded to lower case).
func (p *reInput) next(noCase bool) int {
	c := p.nextChar()
	if noCase && c >= 'A' && c <= 'Z' {
		c += 'a' - 'A'
	}
	return c
}

// peek is rePeek: the next byte, 0 at the end.
func (p *reInput) peek() byte {
	if p.i < p.mx {
		return p.z[p.i]
	}
	return 0
}

// reCompiled is regexp.c's ReCompiled: an NFA, or one being compiled.
type reCompiled struct {
	in      reInput
	err     string
	op      []byte
	arg     []int
	nAlloc  int // the C arrays' size, whose doubling meets mxAlloc
	mxAlloc int
	noCase  bool
	init    []byte // text every match starts with, after an initial ".*"
}

func (p *reCompiled) resize(n int) bool {
	if n > p.mxAlloc {
		p.err = "REGEXP pattern too big"
		return false
	}
	p.nAlloc = n
	return true
}

// insert is re_insert: op before state at; at, or 0 when the NFA is full.
func (p *reCompiled) insert(at, op, arg int) int {
	if p.nAlloc <= len(p.op) && !p.resize(p.nAlloc*2) {
		return 0
	}
	p.op = append(p.op[:at], append([]byte{byte(op)}, p.op[at:]...)...)
	p.arg = append(p.arg[:at], append([]int{arg}, p.arg[at:]...)...)
	return at
}

func (p *reCompiled) append(op, arg int) int { return p.insert(len(p.op), op, arg) }

// copyStates is re_copy: n states from start appended again.
func (p *reCompiled) copyStates(start, n int) {
	if len(p.op)+n >= p.nAlloc && !p.resize(p.nAlloc*2+n) {
		return
	}
	p.op = append(p.op, p.op[start:start+n]...)
	p.arg = append(p.arg, p.arg[start:start+n]...)
}

// hexDigit is re_hex.
func hexDigit(c byte, v *int) bool {
	switch {
	case c >= '0' && c <= '9':
		c -= '0'
	case c >= 'a' && c <= 'f':
		c -= 'a' - 10
	case c >= 'A' && c <= 'F':
		c -= 'A' - 10
	default:
		return false
	}
	*v = *v*16 + int(c)
	return true
}

// escChar is re_esc_char: the character a backslash escapes.
func (p *reCompiled) escChar() int {
	const esc, trans = "afnrtv\\()*.+?[$^{|}]-", "\a\f\n\r\t\v"
	in := &p.in
	if in.i >= in.mx {
		return 0
	}
	c := in.z[in.i]
	v := 0
	if c == 'u' && in.i+4 < in.mx {
		z := in.z[in.i:]
		if hexDigit(z[1], &v) && hexDigit(z[2], &v) && hexDigit(z[3], &v) && hexDigit(z[4], &v) {
			in.i += 5
			return v
		}
	}
	if c == 'x' && in.i+2 < in.mx {
		z := in.z[in.i:]
		if hexDigit(z[1], &v) && hexDigit(z[2], &v) {
			in.i += 3
			return v
		}
	}
	i := strings.IndexByte(esc, c)
	if c == 0 || i < 0 {
		p.err = "unknown \\ escape"
		return int(int8(c)) & 0xffffffff // C's (unsigned)(char)c
	}
	if i < 6 {
		c = trans[i]
	}
	in.i++
	return int(c)
}

// subcompileRE is re_subcompile_re: alternatives up to an unmatched ')'.
func (p *reCompiled) subcompileRE() string {
	start := len(p.op)
	if err := p.subcompileString(); err != "" {
		return err
	}
	for p.in.peek() == '|' {
		end := len(p.op)
		p.insert(start, reFork, end+2-start)
		g := p.append(reGoto, 0)
		p.in.i++
		if err := p.subcompileString(); err != "" {
			return err
		}
		p.arg[g] = len(p.op) - g
	}
	return ""
}

// subcompileString is re_subcompile_string: one alternative.
func (p *reCompiled) subcompileString() string {
	prev := -1
	for {
		c := p.in.next(p.noCase)
		if c == 0 {
			return ""
		}
		start := len(p.op)
		var err string
		switch c {
		case '|', ')':
			p.in.i--
			return ""
		case '(':
			if err = p.subcompileRE(); err == "" {
				if p.in.peek() != ')' {
					return "unmatched '('"
				}
				p.in.i++
			}
		case '.':
			if p.in.peek() == '*' {
				p.append(reAnyStar, 0)
				p.in.i++
			} else {
				p.append(reAny, 0)
			}
		case '*', '+', '?':
			err = p.repeat(c, prev)
		case '$':
			p.append(reMatch, reEOF)
		case '^':
			p.append(reAtStart, 0)
		case '{':
			err = p.bounds(prev)
		case '[':
			err = p.class()
		case '\\':
			p.escape()
		default:
			p.append(reMatch, c)
		}
		if err != "" {
			return err
		}
		prev = start
	}
}

// repeat compiles '*', '+' or '?' after the operand at prev.
func (p *reCompiled) repeat(c, prev int) string {
	if prev < 0 {
		return "'" + string(rune(c)) + "' without operand"
	}
	switch c {
	case '*':
		p.insert(prev, reGoto, len(p.op)-prev+1)
		p.append(reFork, prev-len(p.op)+1)
	case '+':
		p.append(reFork, prev-len(p.op))
	default:
		p.insert(prev, reFork, len(p.op)-prev+1)
	}
	return ""
}

// number reads the digits of a "{m,n}", or reports it too big.
func (p *reCompiled) number() (uint32, bool) {
	var n uint32
	for c := p.in.peek(); c >= '0' && c <= '9'; c = p.in.peek() {
		n = n*10 + uint32(c-'0')
		if int64(n)*2 > int64(p.mxAlloc) {
			return n, false
		}
		p.in.i++
	}
	return n, true
}

// bounds compiles "{m,n}" after the operand at prev.
func (p *reCompiled) bounds(prev int) string {
	if prev < 0 {
		return "'{m,n}' without operand"
	}
	m, ok := p.number()
	if !ok {
		return "REGEXP pattern too big"
	}
	n := m
	if p.in.peek() == ',' {
		p.in.i++
		if n, ok = p.number(); !ok {
			return "REGEXP pattern too big"
		}
	}
	if p.in.peek() != '}' {
		return "unmatched '{'"
	}
	if n < m {
		return "n less than m in '{m,n}'"
	}
	p.in.i++
	sz := len(p.op) - prev
	if m == 0 {
		if n == 0 {
			return "both m and n are zero in '{m,n}'"
		}
		p.insert(prev, reFork, sz+1)
		prev++
		n--
	} else {
		for j := uint32(1); j < m; j++ {
			p.copyStates(prev, sz)
		}
	}
	for j := m; j < n; j++ {
		p.append(reFork, sz+1)
		p.copyStates(prev, sz)
	}
	if n == 0 && m > 0 {
		p.append(reFork, -sz)
	}
	return ""
}

// class compiles "[...]" (past the '[').
func (p *reCompiled) class() string {
	first := len(p.op)
	if p.in.peek() == '^' {
		p.append(reCCExc, 0)
		p.in.i++
	} else {
		p.append(reCCInc, 0)
	}
	c := 0
	for {
		if c = p.in.next(p.noCase); c == 0 {
			break
		}
		if c == '[' && p.in.peek() == ':' {
			return "POSIX character classes not supported"
		}
		if c == '\\' {
			c = p.escChar()
		}
		if p.in.peek() == '-' {
			p.append(reCCRange, c)
			p.in.i++
			if c = p.in.next(p.noCase); c == '\\' {
				c = p.escChar()
			}
			p.append(reCCRange, c)
		} else {
			p.append(reCCValue, c)
		}
		if p.in.peek() == ']' {
			p.in.i++
			break
		}
	}
	if c == 0 {
		return "unclosed '['"
	}
	if len(p.op) > first {
		p.arg[first] = len(p.op) - first
	}
	return ""
}

// escape compiles a backslash sequence (past the '\').
func (p *reCompiled) escape() {
	special := 0
	switch p.in.peek() {
	case 'b':
		special = reBoundary
	case 'd':
		special = reDigit
	case 'D':
		special = reNotDigit
	case 's':
		special = reSpace
	case 'S':
		special = reNotSpace
	case 'w':
		special = reWord
	case 'W':
		special = reNotWord
	}
	if special != 0 {
		p.in.i++
		p.append(special, 0)
		return
	}
	p.append(reMatch, p.escChar())
}

// reCompile is re_compile: the NFA of pattern (up to its first NUL), or
// the error message.
func reCompile(pattern []byte, mxAlloc int, noCase bool) (*reCompiled, string) {
	p := &reCompiled{mxAlloc: mxAlloc, noCase: noCase}
	if !p.resize(30) {
		return nil, p.err
	}
	if len(pattern) > 0 && pattern[0] == '^' {
		pattern = pattern[1:]
	} else {
		p.append(reAnyStar, 0)
	}
	p.in = reInput{z: pattern, mx: len(pattern)}
	if err := p.subcompileRE(); err != "" {
		return nil, err
	}
	if p.in.i < p.in.mx {
		return nil, "unrecognized character"
	}
	p.append(reAccept, 0)
	if p.op[0] == reAnyStar && !noCase {
		p.init = p.initText()
	}
	if p.err != "" {
		return nil, p.err
	}
	return p, ""
}

// initText is the literal text after an initial ".*" (zInit).
func (p *reCompiled) initText() []byte {
	var z []byte
	for i := 1; len(z) < 10 && p.op[i] == reMatch; i++ {
		x := uint32(p.arg[i])
		switch {
		case x <= 0x7f:
			z = append(z, byte(x))
		case x <= 0x7ff:
			z = append(z, byte(0xc0|x>>6), byte(0x80|x&0x3f))
		case x <= 0xffff:
			z = append(z, byte(0xe0|x>>12), byte(0x80|(x>>6)&0x3f), byte(0x80|x&0x3f))
		default:
			return trimNUL(z)
		}
	}
	return trimNUL(z)
}

func trimNUL(z []byte) []byte {
	if len(z) > 0 && z[len(z)-1] == 0 {
		return z[:len(z)-1]
	}
	return z
}

// reSet is one of the matcher's two state sets: the states in order, and
// a mark per state saying which generation of the set holds it (the C
// code looks through the set instead: states² a character).
type reSet struct {
	states []int
	mark   []uint32
	gen    uint32
}

func (s *reSet) reset() {
	s.states = s.states[:0]
	s.gen++
}

func (s *reSet) add(x int) {
	if s.mark[x] != s.gen {
		s.mark[x] = s.gen
		s.states = append(s.states, x)
	}
}

func reWordChar(c int) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func reDigitChar(c int) bool { return c >= '0' && c <= '9' }

func reSpaceChar(c int) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// match is re_match on z (up to its first NUL): whether the NFA accepts
// some part of it.
func (p *reCompiled) match(b *budget, z []byte) (bool, error) {
	in := reInput{z: z, mx: len(z)}
	c := reStart
	if len(p.init) > 0 {
		i := bytes.Index(z, p.init)
		if i < 0 {
			return false, nil
		}
		in.i = i
		c = reStart - 1
	}
	n := len(p.op)
	sets := [2]reSet{{mark: make([]uint32, n), gen: 1}, {mark: make([]uint32, n), gen: 1}}
	this, next := &sets[0], &sets[1]
	next.add(0)
	for c != reEOF && len(next.states) > 0 {
		prev := c
		c = in.next(p.noCase)
		this, next = next, this
		next.reset()
		for i := 0; i < len(this.states); i++ {
			if p.step(this, next, this.states[i], c, prev) {
				return true, nil
			}
		}
		if b.spend(len(this.states) + 1) {
			return false, errStopped
		}
	}
	for _, x := range next.states {
		for p.op[x] == reGoto {
			x += p.arg[x]
		}
		if p.op[x] == reAccept {
			return true, nil
		}
	}
	return false, nil
}

// step runs state x on character c (after prev): the states it adds to
// this character's set and the next one's; true when it accepts.
func (p *reCompiled) step(this, next *reSet, x, c, prev int) bool {
	switch p.op[x] {
	case reMatch:
		if p.arg[x] == c {
			next.add(x + 1)
		}
	case reAtStart:
		if prev == reStart {
			this.add(x + 1)
		}
	case reAny:
		if c != 0 {
			next.add(x + 1)
		}
	case reWord, reNotWord, reDigit, reNotDigit, reSpace, reNotSpace:
		if p.classOf(p.op[x], c) {
			next.add(x + 1)
		}
	case reBoundary:
		if reWordChar(c) != reWordChar(prev) {
			this.add(x + 1)
		}
	case reAnyStar:
		next.add(x)
		this.add(x + 1)
	case reFork:
		this.add(x + p.arg[x])
		this.add(x + 1)
	case reGoto:
		this.add(x + p.arg[x])
	case reAccept:
		return true
	case reCCExc, reCCInc:
		if p.op[x] == reCCExc && c == 0 {
			break
		}
		if n := p.arg[x]; p.inClass(x, n, c) != (p.op[x] == reCCExc) {
			next.add(x + n)
		}
	}
	return false
}

// classOf reports whether c is in the class of op (\w, \W, \d, \D, \s, \S).
func (p *reCompiled) classOf(op byte, c int) bool {
	switch op {
	case reWord:
		return reWordChar(c)
	case reNotWord:
		return !reWordChar(c) && c != 0
	case reDigit:
		return reDigitChar(c)
	case reNotDigit:
		return !reDigitChar(c) && c != 0
	case reSpace:
		return reSpaceChar(c)
	}
	return !reSpaceChar(c) && c != 0
}

// inClass reports whether c is one of the n-1 values and ranges after
// the [...] at x.
func (p *reCompiled) inClass(x, n, c int) bool {
	for j := 1; j > 0 && j < n; j++ {
		if p.op[x+j] == reCCValue {
			if p.arg[x+j] == c {
				return true
			}
		} else {
			if p.arg[x+j] <= c && p.arg[x+j+1] >= c {
				return true
			}
			j++
		}
	}
	return false
}

// regexpFunc is regexp(P, S) (the operator S REGEXP P) and, noCase,
// regexpi(P, S): whether S matches the pattern P. The compiled pattern is
// kept for the statement's next rows, as regexp.c keeps it.
func regexpFunc(noCase bool) sqlite3.ScalarFunction {
	return func(fctx sqlite3.Context, arg ...sqlite3.Value) {
		re, _ := fctx.GetAuxData(0).(*reCompiled)
		fresh := re == nil
		if fresh {
			if arg[0].Type() == sqlite3.NULL {
				fctx.ResultNull()
				return
			}
			mxLen := fctx.Conn().Limit(sqlite3.LIMIT_LIKE_PATTERN_LENGTH, -1)
			if len(arg[0].RawText()) > mxLen {
				fctx.ResultError(errors.New("REGEXP pattern too big"))
				return
			}
			var msg string
			if re, msg = reCompile(cBytes(arg[0]), 75+mxLen/2, noCase); msg != "" {
				fctx.ResultError(errors.New(msg))
				return
			}
		}
		if arg[1].Type() == sqlite3.NULL {
			fctx.ResultNull()
		} else if ok, err := re.match(newBudget(fctx), cBytes(arg[1])); err != nil {
			fctx.ResultError(err)
		} else {
			fctx.ResultInt(b2i(ok))
		}
		if fresh {
			fctx.SetAuxData(0, re)
		}
	}
}

// cBytes is v's text up to its first NUL.
func cBytes(v sqlite3.Value) []byte {
	z := cString(v)
	return z[:len(z)-1]
}
