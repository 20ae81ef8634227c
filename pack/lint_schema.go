package pack

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// The schema check finds the habit of creating the app's tables on every
// start: snug.db.exec("CREATE TABLE todos (…)") with no IF NOT EXISTS, run
// unconditionally. The host keeps the database between starts, so the
// second start fails there and the app stops. A statement under a
// condition (if, a loop, &&, ?:) is left alone: that is a migration step,
// the guide's idiom, and so is SQL held in a variable (the steps list).

// createStmt finds a CREATE of a schema object: its kind (submatch 1),
// IF NOT EXISTS if it says so (2), and its name (3).
var createStmt = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bcreate\s+(?:(?:temp|temporary|unique|virtual)\s+)?(table|index|view|trigger)\s+(if\s+not\s+exists\b)?\s*([\w."` + "`" + `\[\]]*)`)
})

// guardWord finds what makes a statement conditional.
var guardWord = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(?:if|else|while|for|case|default|do)\b|&&|\|\||\?`)
})

// dbLiteralCall returns, for the "snug" at code[p:], the text of the
// string literal that is the first argument of snug.db.exec or
// snug.db.script there, and its offset; ok is false for any other call,
// an argument that is not one literal, or a template with substitutions.
func dbLiteralCall(code string, p int) (lit string, off int, ok bool) {
	i, ok := snugDot(code, p)
	if !ok || !strings.HasPrefix(code[i:], "db") {
		return "", 0, false
	}
	i = skipSpaces(code, i+2)
	if i >= len(code) || code[i] != '.' {
		return "", 0, false
	}
	i = skipSpaces(code, i+1)
	if i, ok = wordAt(code, i, "exec", "script"); !ok {
		return "", 0, false
	}
	i = skipSpaces(code, i)
	if i >= len(code) || code[i] != '(' {
		return "", 0, false
	}
	i = skipSpaces(code, i+1)
	if i >= len(code) || !strings.ContainsRune("\"'`", rune(code[i])) {
		return "", 0, false
	}
	q := code[i]
	for j := i + 1; j < len(code); j++ {
		switch code[j] {
		case '\\':
			j++
		case q:
			lit = code[i+1 : j]
			if q == '`' && strings.Contains(lit, "${") {
				return "", 0, false
			}
			return lit, i + 1, true
		}
	}
	return "", 0, false
}

// conditional reports whether the statement at code[p:] runs only under a
// condition: its own statement holds if, else, a loop or case, &&, || or
// ?; or a block around it is an if, else, loop, switch or
// catch. Function bodies, try and plain blocks are looked through.
func conditional(code string, quoted []bool, p int) bool {
	start := p
	for start > 0 && (quoted[start-1] || !strings.ContainsRune(";{}", rune(code[start-1]))) {
		start--
	}
	// Without semicolons the statement runs back over earlier lines: a
	// keyword anywhere in it counts, which can only miss a diagnostic.
	if guardWord().MatchString(code[start:p]) {
		return true
	}
	depth := 0
	for i := start - 1; i >= 0; i-- {
		if quoted[i] {
			continue
		}
		switch code[i] {
		case '}':
			depth++
		case '{':
			if depth > 0 {
				depth--
			} else if blockIsConditional(code, quoted, i) {
				return true
			}
		}
	}
	return false
}

// blockIsConditional reports whether the block opened at code[open] is the
// body of an if, else, do, loop, switch or catch.
func blockIsConditional(code string, quoted []bool, open int) bool {
	before := strings.TrimRight(code[:open], " \t\r\n")
	for _, w := range []string{"else", "do"} {
		if strings.HasSuffix(before, w) && (len(before) == len(w) || !isWordByte(before[len(before)-len(w)-1])) {
			return true
		}
	}
	if !strings.HasSuffix(before, ")") {
		return false
	}
	depth := 0
	for i := len(before) - 1; i >= 0; i-- {
		if quoted[i] {
			continue
		}
		switch before[i] {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				head := strings.TrimRight(before[:i], " \t\r\n")
				for _, w := range []string{"if", "while", "for", "for await", "switch", "catch"} {
					if strings.HasSuffix(head, w) && (len(head) == len(w) || !isWordByte(head[len(head)-len(w)-1])) {
						return true
					}
				}
				return false
			}
		}
	}
	return false
}

// lintCreateTwice warns about each CREATE without IF NOT EXISTS that the
// app runs on every start.
func (b *builder) lintCreateTwice(u lintUnit, code string, quoted []bool) {
	if !strings.Contains(code, "db") {
		return
	}
	for _, m := range eachSnug(code, func(p int) []int {
		if _, _, ok := dbLiteralCall(code, p); ok && !quoted[p] {
			return []int{p, p + 4}
		}
		return nil
	}) {
		lit, off, _ := dbLiteralCall(code, m[0])
		for _, c := range createStmt().FindAllStringSubmatchIndex(lit, -1) {
			if c[4] >= 0 || conditional(code, quoted, m[0]) {
				continue
			}
			stmt := "CREATE " + strings.ToUpper(lit[c[2]:c[3]]) + " " + lit[c[6]:c[7]]
			d := Diagnostic{Severity: SeverityWarning, Code: "snug.db",
				Message: fmt.Sprintf("%s without IF NOT EXISTS fails the second time the app starts", strings.TrimSpace(stmt)),
				Why:     "the host keeps the app's database between starts, so this runs again on a database that has it: DB_SQL_ERROR (already exists), and the code after it never runs",
				Fix: `write "create table if not exists …" (and "create index if not exists …"), ` +
					`or make it a numbered migration step run once with the version's update: snug.db.script("create table …; update meta set version = 1")`}
			d.File, d.Line, d.Column, d.LineText = b.unitPos(u, off+c[0])
			b.add(d)
		}
	}
}
