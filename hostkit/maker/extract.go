package maker

import (
	"strings"
)

// Extract finds the HTML document in a model's reply: the fenced block
// (```html, or any fence) that holds a document, the longest when several
// do, else a bare document from its <!doctype or <html to its last </html>.
// A fence the reply never closed (a reply cut off) counts to the reply's
// end. It reports false when the reply holds no document: a refusal, prose,
// a snippet without <html> or <body>.
func Extract(reply string) (string, bool) {
	best := ""
	for _, block := range fencedBlocks(reply) {
		if isDocument(block) && len(block) > len(best) {
			best = block
		}
	}
	if best != "" {
		return strings.TrimSpace(best) + "\n", true
	}
	low := strings.ToLower(reply)
	start := strings.Index(low, "<!doctype html")
	if start < 0 {
		start = strings.Index(low, "<html")
	}
	if start < 0 {
		return "", false
	}
	end := strings.LastIndex(low, "</html>")
	if end < start {
		end = len(reply)
	} else {
		end += len("</html>")
	}
	doc := reply[start:end]
	if !isDocument(doc) {
		return "", false
	}
	return strings.TrimSpace(doc) + "\n", true
}

// isDocument reports whether s reads as a whole page rather than a snippet:
// it has <html or <body, and some markup of its own.
func isDocument(s string) bool {
	low := strings.ToLower(s)
	return strings.Contains(low, "<html") || strings.Contains(low, "<body")
}

// fencedBlocks returns the contents of the reply's ``` fences (the info
// string after the opening fence dropped), an unclosed last one included.
func fencedBlocks(reply string) []string {
	var out []string
	rest := reply
	for {
		open := strings.Index(rest, "```")
		if open < 0 {
			return out
		}
		rest = rest[open+3:]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return out
		}
		body := rest[nl+1:]
		end := closingFence(body)
		if end < 0 {
			return append(out, body)
		}
		out = append(out, body[:end])
		rest = body[end+3:]
	}
}

// closingFence is the index of the ``` that closes a fence opened before
// body: one at the start of a line (a model's fence), -1 for none.
func closingFence(body string) int {
	for i := 0; i < len(body); {
		j := strings.Index(body[i:], "```")
		if j < 0 {
			return -1
		}
		at := i + j
		if at == 0 || body[at-1] == '\n' || strings.TrimSpace(body[strings.LastIndexByte(body[:at], '\n')+1:at]) == "" {
			return at
		}
		i = at + 3
	}
	return -1
}
