// Package ascii changes and compares the case of ASCII letters only, as
// HTML, CSS, HTTP and JavaScript keywords are matched: no other byte is
// touched, so a string keeps its length and its non-ASCII characters (the
// Kelvin sign is no k here, unlike with strings.ToLower or EqualFold).
package ascii

// LowerByte is c lower-cased if it is an ASCII capital letter.
func LowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// Lower is s with its ASCII capital letters lower-cased.
func Lower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				b[j] = LowerByte(b[j])
			}
			return string(b)
		}
	}
	return s
}

// EqualFold reports whether a and b are equal with ASCII letters compared
// without case.
func EqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if LowerByte(a[i]) != LowerByte(b[i]) {
			return false
		}
	}
	return true
}
