// Package violation collects the violations a generated frame validator
// finds: each has a JSON pointer path, a stable rule id and a message. The
// collector keeps the current path as a small stack of segments and turns it
// into a pointer only when a violation is added, so the happy path allocates
// nothing. It knows nothing about Snug.
package violation

import (
	"sort"
	"strconv"
	"strings"
)

// Violation is one broken rule.
type Violation struct {
	Path    string `json:"path"`    // JSON pointer to the offending value ("" is the whole frame)
	Rule    string `json:"rule"`    // stable id, e.g. "maxLength" or "net.header.credential"
	Message string `json:"message"` // for people
}

func (v Violation) String() string {
	p := v.Path
	if p == "" {
		p = "/"
	}
	return p + ": " + v.Message + " (" + v.Rule + ")"
}

type segment struct {
	key   string
	index int // -1 for a key
}

// Collector gathers violations. The zero value is ready to use.
type Collector struct {
	stack [8]segment
	extra []segment
	n     int
	list  []Violation
}

// Push enters the member key of the current object.
func (c *Collector) Push(key string) { c.push(segment{key: key, index: -1}) }

// PushIndex enters element i of the current array.
func (c *Collector) PushIndex(i int) { c.push(segment{index: i}) }

func (c *Collector) push(s segment) {
	if c.n < len(c.stack) {
		c.stack[c.n] = s
	} else {
		c.extra = append(c.extra, s)
	}
	c.n++
}

// Pop leaves the innermost member or element.
func (c *Collector) Pop() {
	c.n--
	if c.n >= len(c.stack) {
		c.extra = c.extra[:len(c.extra)-1]
	}
}

// Len is the number of violations so far.
func (c *Collector) Len() int { return len(c.list) }

// Add records a violation at member key of the current path (at the current
// path itself when key is "").
func (c *Collector) Add(key, rule, message string) {
	c.list = append(c.list, Violation{Path: c.path(key), Rule: rule, Message: message})
}

// AddKey records a violation at member key of the current path, even when
// key is "" (an object may name the empty key: its pointer ends in "/").
func (c *Collector) AddKey(key, rule, message string) {
	c.list = append(c.list, Violation{Path: c.path(key) + emptyKey(key), Rule: rule, Message: message})
}

func emptyKey(key string) string {
	if key == "" {
		return "/"
	}
	return ""
}

// AddIndex records a violation at element i of the current path.
func (c *Collector) AddIndex(i int, rule, message string) {
	c.PushIndex(i)
	c.Add("", rule, message)
	c.Pop()
}

func (c *Collector) path(key string) string {
	var b strings.Builder
	for i := 0; i < c.n; i++ {
		s := c.seg(i)
		b.WriteByte('/')
		if s.index >= 0 {
			b.WriteString(strconv.Itoa(s.index))
		} else {
			b.WriteString(Escape(s.key))
		}
	}
	if key != "" {
		b.WriteByte('/')
		b.WriteString(Escape(key))
	}
	return b.String()
}

func (c *Collector) seg(i int) segment {
	if i < len(c.stack) {
		return c.stack[i]
	}
	return c.extra[i-len(c.stack)]
}

// List returns the violations sorted by path, then rule.
func (c *Collector) List() []Violation {
	out := append([]Violation(nil), c.list...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Rule < out[j].Rule
	})
	return out
}

// Escape escapes a JSON pointer reference token (~ as ~0, / as ~1).
func Escape(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
