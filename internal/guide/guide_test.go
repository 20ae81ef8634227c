package guide

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

var fence = regexp.MustCompile("(?s)```(html|js)\n(.*?)\n```")

// TestGuideExamplesBuildStrict feeds every example in the guide through the
// packager with --strict: an example that teaches a mistake fails here.
func TestGuideExamplesBuildStrict(t *testing.T) {
	text, err := Render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	blocks := fence.FindAllStringSubmatch(text, -1)
	if len(blocks) < 10 {
		t.Fatalf("the guide has %d examples, want one per API member and the app's shape", len(blocks))
	}
	for i, b := range blocks {
		page := b[2]
		if b[1] == "js" {
			// Examples are fragments that use the page's own names; a function
			// body lets `return` and `await` stand as they do in an app.
			page = ProbeHead + "<script type=\"module\">async function example() {\n" + b[2] + "\n}\nexample();</script></body></html>"
		}
		res, err := pack.Build(context.Background(), pack.Options{Path: "app.html", HTML: []byte(page), Strict: true})
		if err != nil {
			var diags []string
			if res != nil {
				for _, d := range res.Diagnostics {
					diags = append(diags, d.String())
				}
			}
			t.Errorf("example %d does not build with --strict: %v\n%s\n--- example:\n%s", i, err, strings.Join(diags, "\n"), b[2])
		}
	}
}

func TestGuideCoversTheWholeAPI(t *testing.T) {
	text, err := Render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// 3,199 words with issue 28's sections (capabilities, storage with
	// migrations and RETURNING, network consent, Markdown, the error
	// fields), each with its example; 3,313 with snug.db.script and the
	// registry's CAPABILITY_ABSENT and TOO_MANY_REQUESTS rows. The rest is
	// room for rows and diagnostics, which grow the guide on their own.
	if n := len(strings.Fields(text)); n > 3400 {
		t.Errorf("the guide has %d words; keep it under 3,400 (issue 28 added the sections a model lacked: error fields, migrations, offline Markdown, network consent)", n)
	}
	// Every method the typings declare on Snug has a section.
	members, err := API(runtimejs.Types)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"snug.ready", "snug.ask", "snug.db.exec", "snug.db.query", "snug.db.get", "snug.db.set",
		"snug.db.script", "snug.db.export", "snug.db.import", "snug.net.fetch", "snug.openUrl", "snug.saveFile", "snug.on", "snug.off", "snug.emit"}
	have := map[string]bool{}
	for _, m := range members {
		have[m.Name] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("snug.d.ts documents no %s with an example", w)
		}
		if !strings.Contains(text, "### `"+w+"`") {
			t.Errorf("the guide has no section for %s", w)
		}
	}
	// What issue 14 found missing: every code an app gets, the refused SQL,
	// the theme's event and object, links, files, onPartial.
	for _, s := range []string{"[SNUG_APP_REQUEST]", "ONLY a JSON object", "sandbox.network", "sandbox.storage", "html.inline-handler", "cdn.jsdelivr.net",
		"`NET_FETCH_FAILED` ↻", "`NET_CONFIRM_DENIED`", "`DB_SQL_ERROR` refuses `ATTACH`", "two statements in one call",
		"`theme-change`", "{ mode: \"light\" | \"dark\", tokens }", "`--snug-accent`", "snug.on(\"theme-change\", ({ theme }) =>",
		"<a href=\"https://…\">", "<a download>", "`DB_CORRUPT`", "VALUES('rebuild')", "onPartial", "onText is the raw JSON text", "`saveFile`",
		// Issue 28 items 3, 8-13: error fields, migrations, RETURNING, absent capabilities, Markdown, network.
		"`CAPABILITY_ABSENT`", "retryAfterMs", "attemptsRemaining", "`retryable`", "snug.db.script(`${steps[v]}; update meta set version", "returning id",
		"createTextNode", "once per origin", "Allow until I close the page", "--dev-loopback"} {
		if !strings.Contains(text, s) {
			t.Errorf("the guide does not mention %q", s)
		}
	}
}

func TestAPIRequiresAnExamplePerMethod(t *testing.T) {
	dts := "export interface Snug {\n  /** Does a thing. */\n  thing(): void;\n}\n"
	if _, err := API(dts); err == nil || !strings.Contains(err.Error(), "snug.thing has no @example") {
		t.Fatalf("API(%q) = %v, want an error naming snug.thing", dts, err)
	}
}

func TestMistakesComeFromThePackager(t *testing.T) {
	ms, err := Mistakes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(probes) {
		t.Fatalf("got %d mistakes for %d probes", len(ms), len(probes))
	}
	for _, m := range ms {
		if m.Code == "" || m.Why == "" {
			t.Errorf("mistake %+v has no code or reason", m)
		}
	}
}
