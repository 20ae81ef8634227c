package agent

import (
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
)

// newError is frame.NewError with the message cut to the error object's
// maxLength (frame.ErrorMessageMaxLength, from the schema), so a long reason
// (a schema compiler's report) still makes a valid frame.
func newError(code, message string) *frame.Error {
	return frame.NewError(code, truncate(message, frame.ErrorMessageMaxLength))
}

// truncate returns s cut to at most n code points, ending in "…" when cut.
func truncate(s string, n int) string {
	count := 0
	for i := range s {
		if count == n-1 {
			if utf8.RuneCountInString(s[i:]) > 1 {
				return s[:i] + "…"
			}
			return s
		}
		count++
	}
	return s
}
