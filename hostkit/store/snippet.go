package store

import (
	"errors"
	"strings"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/ext/fts5"
)

// fts5's snippet(), as fts5_aux.c writes it (fts5SnippetFunction), with
// the budget of funcs.go. SQLite's scores every window a phrase instance
// or a sentence start opens against every instance of the row: instances²
// in one call (8 s for one row of 20,000 matches; highlight and bm25 are
// linear). It cannot be replaced through Conn.CreateFunction (the fts5
// table finds its auxiliary functions itself), so registerModules puts
// this one in its place through fts5's own API. TestSnippetMatchesFTS5
// compares it with the original: the same text everywhere but over a NULL
// column, where this one returns '' (fts5's own: NULL), since the driver's
// Context.ColumnText does not tell NULL from ''.

// errFTS5Corrupt is fts5's FTS5_CORRUPT (SQLITE_CORRUPT_VTAB).
var errFTS5Corrupt = sqlite3.CORRUPT_VTAB

// snippetInst is one phrase instance of the row.
type snippetInst struct{ phrase, col, off int32 }

// snippetFunc is snippet(T, col, open, close, ellipsis, tokens) on the
// connection c, whose interrupt the budget looks at.
func snippetFunc(c *sqlite3.Conn) fts5.ExtensionFunction {
	return auxFunc(c, "snippet", 5, (*snippet).run)
}

// auxFunc is the fts5 function name of nArg arguments on the connection c:
// run writes its text with a budget that looks at c's interrupt.
func auxFunc(c *sqlite3.Conn, name string, nArg int, run func(*snippet, []sqlite3.Value) (string, error)) fts5.ExtensionFunction {
	return func(fts fts5.Context, fctx sqlite3.Context, arg ...sqlite3.Value) {
		if len(arg) != nArg {
			fctx.ResultError(errors.New("wrong number of arguments to function " + name + "()"))
			return
		}
		out, err := run(&snippet{fts: fts, b: &budget{ctx: c.GetInterrupt()}}, arg)
		if err != nil {
			fctx.ResultError(err)
			return
		}
		fctx.ResultText(out)
	}
}

// snippet is one call's state.
type snippet struct {
	fts      fts5.Context
	b        *budget
	insts    []snippetInst
	phraseSz []int32
}

// cText is a text argument as fts5ValueToText and "%s" read it: "" for
// NULL, up to its first NUL.
func cText(v sqlite3.Value) string {
	s := v.Text()
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return s
}

// load reads the row's instances and the phrases' sizes once.
func (s *snippet) load() error {
	n, err := s.fts.InstCount()
	if err != nil {
		return err
	}
	s.insts = make([]snippetInst, n)
	for i := range s.insts {
		p, c, o, err := s.fts.Inst(i)
		if err != nil {
			return err
		}
		s.insts[i] = snippetInst{int32(p), int32(c), int32(o)}
	}
	s.phraseSz = make([]int32, s.fts.PhraseCount())
	for i := range s.phraseSz {
		s.phraseSz[i] = int32(s.fts.PhraseSize(i))
	}
	return nil
}

// best is the window snippet shows.
type best struct {
	col, start, score, colSize int32
}

func (s *snippet) run(arg []sqlite3.Value) (string, error) {
	iCol := int32(arg[0].Int64())
	open, closing, ellipsis := cText(arg[1]), cText(arg[2]), cText(arg[3])
	// fts5 (3.54) keeps the window between 0 and 64 tokens.
	nToken := min(max(int32(arg[4].Int64()), 0), 64)
	if err := s.load(); err != nil {
		return "", err
	}
	bw := best{col: max(iCol, 0)}
	for i := range int32(s.fts.ColumnCount()) {
		if iCol >= 0 && iCol != i {
			continue
		}
		if err := s.scoreColumn(i, nToken, &bw); err != nil {
			return "", err
		}
	}
	doc, err := s.fts.ColumnText(int(bw.col))
	if err != nil {
		return "", err
	}
	if bw.colSize == 0 {
		n, err := s.fts.ColumnSize(int(bw.col))
		if err != nil {
			return "", err
		}
		bw.colSize = int32(n)
	}
	return s.highlight(doc, bw, nToken, open, closing, ellipsis)
}

// scoreColumn scores the windows that column i's instances and sentence
// starts open, keeping the best in bw.
func (s *snippet) scoreColumn(i, nToken int32, bw *best) error {
	doc, err := s.fts.ColumnText(int(i))
	if err != nil {
		return err
	}
	loc, err := s.fts.ColumnLocale(int(i))
	if err != nil {
		return err
	}
	first, err := s.sentences(doc, loc)
	if err != nil {
		return err
	}
	n, err := s.fts.ColumnSize(int(i))
	if err != nil {
		return err
	}
	docSize := int32(n)
	seen := make([]bool, len(s.phraseSz))
	for _, in := range s.insts {
		if in.col != i {
			continue
		}
		if in.off > docSize {
			return errFTS5Corrupt
		}
		clear(seen)
		score, adj, err := s.score(docSize, seen, i, in.off, nToken)
		if err != nil {
			return err
		}
		if score > bw.score {
			*bw = best{col: i, start: adj, score: score, colSize: docSize}
		}
		if len(first) == 0 || docSize <= nToken {
			continue
		}
		jj := 0
		for ; jj < len(first)-1; jj++ {
			if first[jj+1] > in.off {
				break
			}
		}
		if s.b.spend(jj + 1) {
			return errStopped
		}
		if first[jj] < in.off {
			clear(seen)
			score, _, err := s.score(docSize, seen, i, first[jj], nToken)
			if err != nil {
				return err
			}
			if first[jj] == 0 {
				score += 120
			} else {
				score += 100
			}
			if score > bw.score {
				*bw = best{col: i, start: first[jj], score: score, colSize: docSize}
			}
		}
	}
	return nil
}

// sentences is fts5SentenceFinderCb's list: the first token of each
// sentence (a token after '.' or ':' and white space).
func (s *snippet) sentences(doc, loc string) ([]int32, error) {
	var first []int32
	pos := int32(0)
	err := s.fts.Tokenize(doc, loc, func(flags fts5.TokenFlag, _ string, start, _ int) error {
		if flags&fts5.TOKEN_COLOCATED != 0 {
			return nil
		}
		if pos > 0 {
			i := start - 1
			var c byte
			for ; i >= 0; i-- {
				if c = doc[i]; c != ' ' && c != '\t' && c != '\n' && c != '\r' {
					break
				}
			}
			if i != start-1 && (c == '.' || c == ':') {
				first = append(first, pos)
			}
			if s.b.spend(start - i) {
				return errStopped
			}
		} else {
			first = append(first, 0)
		}
		pos++
		return nil
	})
	return first, err
}

// score is fts5SnippetScore: the score of the nToken tokens of column col
// from pos, and the start that centres them on its matches.
func (s *snippet) score(docSize int32, seen []bool, col, pos, nToken int32) (int32, int32, error) {
	if s.b.spend(len(s.insts)) {
		return 0, 0, errStopped
	}
	end := int64(pos) + int64(nToken)
	first, last, score := int32(-1), int32(0), int32(0)
	for _, in := range s.insts {
		if in.col != col || in.off < pos || int64(in.off) >= end {
			continue
		}
		if seen[in.phrase] {
			score++
		} else {
			score += 1000
		}
		seen[in.phrase] = true
		if first < 0 {
			first = in.off
		}
		last = in.off + s.phraseSz[in.phrase]
	}
	adj := int64(first) - int64((nToken-(last-first))/2)
	if adj+int64(nToken) > int64(docSize) {
		adj = int64(docSize) - int64(nToken)
	}
	return score, int32(max(adj, 0)), nil
}

// instIter is fts5CInstIter: the row's instances in one column, those
// that overlap coalesced into one [start, end] of token positions.
type instIter struct {
	s          *snippet
	col        int32
	i          int
	start, end int32
}

func (it *instIter) next() {
	it.start, it.end = -1, -1
	for ; it.i < len(it.s.insts); it.i++ {
		in := it.s.insts[it.i]
		if in.col != it.col {
			continue
		}
		end := in.off - 1 + it.s.phraseSz[in.phrase]
		switch {
		case it.start < 0:
			it.start, it.end = in.off, end
		case in.off <= it.end:
			it.end = max(it.end, end)
		default:
			return
		}
	}
}

// highlighter is fts5's HighlightContext for snippet's window.
type highlighter struct {
	doc                  string
	rangeStart, rangeEnd int32
	open, closing        string
	it                   instIter
	pos                  int32
	off                  int
	isOpen               bool
	out                  strings.Builder
	b                    *budget
}

// appendC appends z up to its first NUL, as "%s" does.
func (h *highlighter) appendC(z string) {
	if i := strings.IndexByte(z, 0); i >= 0 {
		z = z[:i]
	}
	h.out.WriteString(z)
}

// appendDoc appends the document from h.off, n bytes ("%.*s": a negative
// n is the rest).
func (h *highlighter) appendDoc(n int) {
	if n < 0 {
		h.appendC(h.doc[h.off:])
		return
	}
	h.appendC(h.doc[h.off : h.off+n])
}

// highlight writes snippet's text: the window of nToken tokens from
// bw.start, its matches between open and closing, ellipses where it cuts.
func (s *snippet) highlight(doc string, bw best, nToken int32, open, closing, ellipsis string) (string, error) {
	h := &highlighter{doc: doc, rangeStart: bw.start, rangeEnd: bw.start + nToken - 1,
		open: open, closing: closing, it: instIter{s: s, col: bw.col}, b: s.b}
	h.it.next()
	if bw.start > 0 {
		h.appendC(ellipsis)
	}
	for h.it.start >= 0 && h.it.start < bw.start {
		h.it.next()
	}
	if err := h.run(s.fts, bw.col); err != nil {
		return "", err
	}
	if h.rangeEnd >= bw.colSize-1 {
		h.appendDoc(len(doc) - h.off)
	} else {
		h.appendC(ellipsis)
	}
	return h.out.String(), nil
}

// run tokenizes the document, column col of the row, through token, and
// closes a run of matches left open.
func (h *highlighter) run(fts fts5.Context, col int32) error {
	loc, err := fts.ColumnLocale(int(col))
	if err != nil {
		return err
	}
	if err := fts.Tokenize(h.doc, loc, h.token); err != nil {
		return err
	}
	if h.isOpen {
		h.appendC(h.closing)
	}
	return nil
}

// token is fts5HighlightCb.
func (h *highlighter) token(flags fts5.TokenFlag, _ string, start, end int) error {
	if flags&fts5.TOKEN_COLOCATED != 0 {
		return nil
	}
	if h.b.spend(1) {
		return errStopped
	}
	pos := h.pos
	h.pos++
	if h.rangeEnd >= 0 {
		if pos < h.rangeStart || pos > h.rangeEnd {
			return nil
		}
		if h.rangeStart != 0 && pos == h.rangeStart {
			h.off = start
		}
	}
	if h.isOpen && (pos <= h.it.start || h.it.start < 0) && start > h.off {
		h.appendC(h.closing)
		h.isOpen = false
	}
	if pos == h.it.start && !h.isOpen {
		h.appendDoc(start - h.off)
		h.appendC(h.open)
		h.off = start
		h.isOpen = true
	}
	if pos == h.it.end {
		if !h.isOpen {
			h.appendC(h.open)
			h.isOpen = true
		}
		h.appendDoc(end - h.off)
		h.off = end
		h.it.next()
	}
	if pos == h.rangeEnd {
		if h.isOpen {
			if h.it.start >= 0 && pos >= h.it.start {
				h.appendDoc(end - h.off)
				h.off = end
			}
			h.appendC(h.closing)
			h.isOpen = false
		}
		h.appendDoc(end - h.off)
		h.off = end
	}
	return nil
}

// highlightFunc is highlight(T, col, open, close) on the connection c:
// fts5_aux.c's fts5HighlightFunction, with the budget of funcs.go. fts5's
// own builds its result by copying what it wrote so far at every match
// (sqlite3_mprintf("%z%.*s")): output² in one call, two minutes for a row
// of 1,000,000 matches. TestHighlightMatchesFTS5 compares the two.
func highlightFunc(c *sqlite3.Conn) fts5.ExtensionFunction {
	return auxFunc(c, "highlight", 3, func(s *snippet, arg []sqlite3.Value) (string, error) {
		return s.highlightColumn(arg[0].Int64(), cText(arg[1]), cText(arg[2]))
	})
}

// highlightColumn writes column col of the row with each run of matches
// between open and closing; "" for a column the table does not have.
func (s *snippet) highlightColumn(col int64, open, closing string) (string, error) {
	if col < 0 || col >= int64(s.fts.ColumnCount()) {
		return "", nil // fts5's SQLITE_RANGE
	}
	doc, err := s.fts.ColumnText(int(col))
	if err != nil {
		return "", err
	}
	if err := s.load(); err != nil {
		return "", err
	}
	h := &highlighter{doc: doc, rangeEnd: -1, open: open, closing: closing, it: instIter{s: s, col: int32(col)}, b: s.b}
	h.it.next()
	if err := h.run(s.fts, int32(col)); err != nil {
		return "", err
	}
	h.appendDoc(len(doc) - h.off)
	return h.out.String(), nil
}
