package store

import (
	"slices"

	"github.com/ncruces/go-sqlite3"
)

// The sides trimFunc trims.
const (
	trimLeft  = 1
	trimRight = 2
)

// trimFunc is trim, ltrim or rtrim with two arguments, trim(X, Y): X, as
// text, without the characters of Y at the trimmed sides. As SQLite reads
// it, Y's characters end at its first NUL, a character is one byte or a
// byte from 0xC0 up with the continuation bytes after it, and at each step
// the first of Y's characters (in Y's order) that X starts (or ends) with
// is removed. SQLite tries every character of Y at each step (X × Y); this
// looks each candidate length up in a map instead, which for any Y made of
// valid UTF-8 is a few lookups a step, and counts its work otherwise.
func trimFunc(sides int) sqlite3.ScalarFunction {
	return func(fctx sqlite3.Context, arg ...sqlite3.Value) {
		if isNull(arg...) {
			fctx.ResultNull()
			return
		}
		s, set := arg[0].Text(), trimSet(arg[1].Text())
		if len(set.first) == 0 {
			fctx.ResultText(s)
			return
		}
		b := newBudget(fctx)
		var stopped bool
		if sides&trimLeft != 0 {
			s, stopped = set.trim(b, s, true)
		}
		if !stopped && sides&trimRight != 0 {
			s, stopped = set.trim(b, s, false)
		}
		if stopped {
			fctx.ResultError(errStopped)
			return
		}
		fctx.ResultText(s)
	}
}

// charSet is trim's Y: the index of each distinct character's first
// occurrence, and the distinct lengths, shortest first.
type charSet struct {
	first map[string]int
	lens  []int
}

// trimSet splits y into characters as SQLite's trim does.
func trimSet(y string) charSet {
	set := charSet{first: map[string]int{}}
	for i, n := 0, 0; i < len(y) && y[i] != 0; n++ {
		j := i + 1
		if y[i] >= 0xc0 {
			for j < len(y) && isCont(y[j]) {
				j++
			}
		}
		if _, ok := set.first[y[i:j]]; !ok {
			set.first[y[i:j]] = n
			if !slices.Contains(set.lens, j-i) {
				set.lens = append(set.lens, j-i)
			}
		}
		i = j
	}
	slices.Sort(set.lens)
	return set
}

// trim removes set's characters from the left (or right) of s while one
// matches, each time the one earliest in Y among those that do. It
// reports true when the budget stopped it.
func (set charSet) trim(b *budget, s string, left bool) (string, bool) {
	for len(s) > 0 {
		best, bestLen := -1, 0
		for _, n := range set.lens {
			if n > len(s) {
				break
			}
			if b.spend(n) {
				return s, true
			}
			part := s[len(s)-n:]
			if left {
				part = s[:n]
			}
			if i, ok := set.first[part]; ok && (best < 0 || i < best) {
				best, bestLen = i, n
			}
		}
		if best < 0 {
			break
		}
		if left {
			s = s[bestLen:]
		} else {
			s = s[:len(s)-bestLen]
		}
	}
	return s, false
}
