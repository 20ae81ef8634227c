package maker

import (
	"fmt"
	"strings"

	"github.com/snuggen/snuggen/pack"
)

// replyRule closes the system prompt: how the loop reads the reply.
const replyRule = `

## How to answer

You are writing a Snug app for the user. Answer with the WHOLE app as ONE
HTML file in a single fenced block that starts with ` + "```html" + `, and nothing
after it. Follow the guide above: no fetch, no localStorage, no alert,
confirm or prompt, no inline on* handlers, no links to other local pages.
Give the app its snug:app-id and snug:display-name metas. When you are
asked to fix findings, change what they name and keep the rest.
`

// systemPrompt is the guide followed by the reply rule.
func systemPrompt(guide string) string {
	return strings.TrimRight(guide, "\n") + "\n" + replyRule
}

// firstTurn is the user's request, with the current source when the app is
// being changed.
func firstTurn(req Request) string {
	if len(req.Source) == 0 {
		return fmt.Sprintf("Write a Snug app: %s\n", req.Prompt)
	}
	return fmt.Sprintf(`Change this Snug app: %s

Keep its snug:app-id (%s): its database belongs to that app and must
survive. Its tables hold the user's data: when the change needs new columns
or tables, migrate as the guide's Storage section does: append numbered
steps after the app's existing ones ("create table if not exists", an
"alter table … add column" checked first with pragma_table_info), the
version kept with snug.db.get/snug.db.set ("schemaVersion"), and never drop
or recreate a table that has data.

The current %s:

%s
Answer with the whole new file.
`, req.Prompt, req.appID(), req.name(), fence(req.Source))
}

// noDocumentTurn asks again when a reply held no HTML document.
func noDocumentTurn(req Request, reply string) string {
	return fmt.Sprintf(`Your answer held no HTML document, so there is no app to build. %s

Answer with the whole app as one HTML file in a single `+"```html"+` fenced block.
What you answered began: %q
`, requestLine(req), clip(reply, 300))
}

// fixTurn sends the findings of one round back with the source they are
// about, asking for the whole corrected file.
func fixTurn(req Request, src []byte, diags []pack.Diagnostic, findings []Finding) string {
	var b strings.Builder
	if len(diags) > 0 {
		fmt.Fprintf(&b, "The app does not build yet. snuggen build --strict reported %d %s:\n\n", len(diags), plural(len(diags), "problem"))
		for _, d := range diags {
			b.WriteString(d.Detail())
			b.WriteByte('\n')
		}
	}
	if len(findings) > 0 {
		fmt.Fprintf(&b, "The app builds, but when it ran in the Snug runner (headless Chromium) %d %s came up:\n\n", len(findings), plural(len(findings), "problem"))
		for _, f := range findings {
			b.WriteString(f.Detail())
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "%s\n\nThe current %s, with the line numbers above counting from its first line:\n\n%s\n", requestLine(req), req.name(), fence(src))
	b.WriteString("Fix every problem listed, each as its fix says, keep everything else, and answer with the whole corrected file.\n")
	return b.String()
}

func requestLine(req Request) string {
	if len(req.Source) > 0 {
		return "The user asked to change the app: " + req.Prompt
	}
	return "The user asked for: " + req.Prompt
}

// fence puts src in an html fence longer than any run of backticks in it.
func fence(src []byte) string {
	ticks := "```"
	for strings.Contains(string(src), ticks) {
		ticks += "`"
	}
	return ticks + "html\n" + strings.TrimRight(string(src), "\n") + "\n" + ticks + "\n"
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
