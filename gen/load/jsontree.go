package load

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// node is a JSON value with the byte offset where it starts, so diagnostics
// can point at a line and column. Object members keep their file order.
type node struct {
	kind    byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	off     int
	members []member
	items   []*node
	str     string
	num     string
	b       bool
}

type member struct {
	key    string
	keyOff int
	val    *node
}

func (n *node) get(key string) *node {
	if n == nil || n.kind != 'o' {
		return nil
	}
	for _, m := range n.members {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// pointerToKey returns the JSON pointer of the first member named key, in
// file order, depth first; ok is false when no object has one.
func (n *node) pointerToKey(key string) (ptr string, ok bool) {
	if n == nil {
		return "", false
	}
	esc := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1") }
	for _, m := range n.members {
		if m.key == key {
			return "/" + esc(key), true
		}
		if p, ok := m.val.pointerToKey(key); ok {
			return "/" + esc(m.key) + p, true
		}
	}
	for i, it := range n.items {
		if p, ok := it.pointerToKey(key); ok {
			return "/" + strconv.Itoa(i) + p, true
		}
	}
	return "", false
}

// at returns the node at JSON pointer p and the offset to report for it (the
// key's offset for an object member), or nil.
func (n *node) at(p string) (*node, int) {
	if p == "" || p == "#" {
		return n, n.off
	}
	p = strings.TrimPrefix(p, "#")
	cur, off := n, n.off
	for _, tok := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch {
		case cur == nil:
			return nil, off
		case cur.kind == 'o':
			var next *node
			for _, m := range cur.members {
				if m.key == tok {
					next, off = m.val, m.keyOff
					break
				}
			}
			if next == nil {
				return cur, off
			}
			cur = next
		case cur.kind == 'a':
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur.items) {
				return cur, off
			}
			cur = cur.items[i]
			off = cur.off
		default:
			return cur, off
		}
	}
	return cur, off
}

type treeParser struct {
	s   []byte
	pos int
}

// parseTree parses data into a node tree; the error carries the offset.
func parseTree(data []byte) (*node, int, error) {
	p := &treeParser{s: data}
	n, err := p.value(0)
	if err != nil {
		return nil, p.pos, err
	}
	p.ws()
	if p.pos != len(p.s) {
		return nil, p.pos, fmt.Errorf("unexpected text after the JSON value")
	}
	return n, 0, nil
}

func (p *treeParser) ws() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t' || p.s[p.pos] == '\n' || p.s[p.pos] == '\r') {
		p.pos++
	}
}

// value parses the JSON value at p.pos, depth levels in, into a node that
// keeps its offsets; a step per kind.
func (p *treeParser) value(depth int) (*node, error) {
	if depth > 200 {
		return nil, fmt.Errorf("nesting too deep")
	}
	p.ws()
	if p.pos >= len(p.s) {
		return nil, fmt.Errorf("unexpected end of input")
	}
	n := &node{off: p.pos}
	switch c := p.s[p.pos]; {
	case c == '{':
		if err := p.object(n, depth); err != nil {
			return nil, err
		}
		return n, nil
	case c == '[':
		if err := p.array(n, depth); err != nil {
			return nil, err
		}
		return n, nil
	case c == '"':
		n.kind = 's'
		s, err := p.str()
		n.str = s
		return n, err
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(string(p.s[p.pos:min(len(p.s), p.pos+5)]), lit) {
				p.pos += len(lit)
				n.kind = 'b'
				n.b = lit == "true"
				if lit == "null" {
					n.kind = 'z'
				}
				return n, nil
			}
		}
		return nil, fmt.Errorf("invalid literal")
	case c == '-' || (c >= '0' && c <= '9'):
		start := p.pos
		for p.pos < len(p.s) && strings.IndexByte("+-0123456789.eE", p.s[p.pos]) >= 0 {
			p.pos++
		}
		n.kind = 'n'
		n.num = string(p.s[start:p.pos])
		if _, err := strconv.ParseFloat(n.num, 64); err != nil {
			p.pos = start
			return nil, fmt.Errorf("invalid number %q", n.num)
		}
		return n, nil
	default:
		return nil, fmt.Errorf("unexpected character %q", c)
	}
}

// object parses the object at p.pos (its "{") into n, refusing a key
// named twice.
func (p *treeParser) object(n *node, depth int) error {
	n.kind = 'o'
	p.pos++
	p.ws()
	if p.pos < len(p.s) && p.s[p.pos] == '}' {
		p.pos++
		return nil
	}
	for {
		p.ws()
		koff := p.pos
		if p.pos >= len(p.s) || p.s[p.pos] != '"' {
			return fmt.Errorf("expected a string key")
		}
		k, err := p.str()
		if err != nil {
			return err
		}
		for _, m := range n.members {
			if m.key == k {
				p.pos = koff
				return fmt.Errorf("duplicate key %q", k)
			}
		}
		p.ws()
		if p.pos >= len(p.s) || p.s[p.pos] != ':' {
			return fmt.Errorf("expected ':' after key %q", k)
		}
		p.pos++
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		n.members = append(n.members, member{key: k, keyOff: koff, val: v})
		p.ws()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return nil
		}
		return fmt.Errorf("expected ',' or '}' in an object")
	}
}

// array parses the array at p.pos (its "[") into n.
func (p *treeParser) array(n *node, depth int) error {
	n.kind = 'a'
	p.pos++
	p.ws()
	if p.pos < len(p.s) && p.s[p.pos] == ']' {
		p.pos++
		return nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return err
		}
		n.items = append(n.items, v)
		p.ws()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.s) && p.s[p.pos] == ']' {
			p.pos++
			return nil
		}
		return fmt.Errorf("expected ',' or ']' in an array")
	}
}

func (p *treeParser) str() (string, error) {
	p.pos++ // opening quote
	var b strings.Builder
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			if p.pos+1 >= len(p.s) {
				return "", fmt.Errorf("unterminated string")
			}
			e := p.s[p.pos+1]
			p.pos += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'u':
				if p.pos+4 > len(p.s) {
					return "", fmt.Errorf("short \\u escape")
				}
				v, err := strconv.ParseUint(string(p.s[p.pos:p.pos+4]), 16, 32)
				if err != nil {
					return "", fmt.Errorf("bad \\u escape")
				}
				p.pos += 4
				b.WriteRune(rune(v))
			default:
				return "", fmt.Errorf("bad escape \\%c", e)
			}
		case c < 0x20:
			return "", fmt.Errorf("control character in a string")
		default:
			r, size := utf8.DecodeRune(p.s[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", fmt.Errorf("invalid UTF-8")
			}
			b.Write(p.s[p.pos : p.pos+size])
			p.pos += size
		}
	}
	return "", fmt.Errorf("unterminated string")
}

// lineCol converts a byte offset into 1-based line and column (columns count
// bytes, as Go's compilers do).
func lineCol(data []byte, off int) (int, int) {
	line, col := 1, 1
	for i := 0; i < off && i < len(data); i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}
