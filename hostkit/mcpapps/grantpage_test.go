package mcpapps

import (
	"html/template"
	"strings"
	"testing"
)

// TestGrantPageEscapesAsHTMLTemplate: the grant page shows what an app
// chose (its name, the URL it asks for) escaped exactly as html/template
// escaped it (the oracle here, in tests only): a name or URL carrying markup
// stays text.
func TestGrantPageEscapesAsHTMLTemplate(t *testing.T) {
	tmpl := template.Must(template.New("grant").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Allow network access?</title>
<meta name="viewport" content="width=device-width">
<style>body{font:16px system-ui,sans-serif;max-width:36em;margin:3em auto;padding:0 1em}code{word-break:break-all}button{font:inherit;padding:.4em 1em;margin-right:.5em}</style>
</head><body>
{{if .Done}}<h1>{{.Done}}</h1><p>Go back to the conversation and try again.</p>
{{else}}<h1>Allow network access?</h1>
<p><b>{{.Name}}</b> wants to reach <b>{{.Origin}}</b>.</p>
<p>Its request: <code>{{.Method}} {{.URL}}</code></p>
<p>Allowing lets this app reach {{.Origin}} from now on (you can revoke it in the grants file). Denying changes nothing.</p>
<form method="post"><button name="decision" value="always">Always allow</button><button name="decision" value="deny">Deny</button></form>
{{end}}</body></html>`))
	hostile := []string{`<script>alert(1)</script>`, `"><img src=x onerror=alert(1)>`, `a&b'c"d`, "nul\x00here", `</b><form action="https://evil.example/">`, "Notes ✓", ""}
	for _, name := range hostile {
		for _, u := range hostile {
			var want, got strings.Builder
			if err := tmpl.Execute(&want, map[string]string{"Name": name, "Origin": "https://api.example.com", "Method": "GET", "URL": "https://api.example.com/" + u}); err != nil {
				t.Fatal(err)
			}
			grantHTML(&got, "", name, "https://api.example.com", "GET", "https://api.example.com/"+u)
			if got.String() != want.String() {
				t.Fatalf("name %q, url %q:\n%s\nwant\n%s", name, u, got.String(), want.String())
			}
			if strings.Contains(got.String(), "<script>") || strings.Contains(got.String(), "<img") {
				t.Fatalf("markup passed through: %s", got.String())
			}
		}
		var want, got strings.Builder
		done := "Allowed: " + name + " may reach https://x.example."
		if err := tmpl.Execute(&want, map[string]string{"Done": done}); err != nil {
			t.Fatal(err)
		}
		grantHTML(&got, done, "", "", "", "")
		if got.String() != want.String() {
			t.Fatalf("done %q:\n%s\nwant\n%s", done, got.String(), want.String())
		}
	}
}
