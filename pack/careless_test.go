package pack

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// carelessDiagnosed is, for each app of testdata/corpus/careless that a
// strict build must refuse, the one habit it shows: a word of the
// message, a word of the line it is on, and a word of the fix.
var carelessDiagnosed = map[string][]struct{ msg, line, fix string }{
	"fetchapi":      {{"fetch is not available", `await fetch("https://api`, "snug.net.fetch"}},
	"storage":       {{"localStorage", `localStorage.getItem`, "snug.db"}, {"localStorage", "localStorage.setItem", "snug.db"}, {"sessionStorage", "sessionStorage.setItem", "snug.db"}, {"indexedDB", "indexedDB.open", "snug.db"}},
	"modals":        {{"prompt", `prompt("Type`, "<dialog"}, {"confirm", `confirm("Delete`, "<dialog"}},
	"winopen":       {{"window.open", "window.open(", "snug.openUrl"}},
	"formpost":      {{"cannot submit", `<form action="https://formspree`, "snug.net.fetch"}},
	"lochref":       {{"location.href", `location.href = "https://`, "snug.openUrl"}},
	"inlineonclick": {{"onclick", `<button onclick="remove`, "addEventListener"}},
	"cdnscript":     {{"code.jquery.com is not on the CDN allowlist", `<script src="https://code.jquery.com`, "download the file"}},
	"esmsh":         {{"esm.sh is not on the CDN allowlist", `from "https://esm.sh`, "download the file"}},
	"clipread":      {{"navigator.clipboard.readText", "navigator.clipboard.readText()", "paste event"}},
	"cookie":        {{"document.cookie", `document.cookie = "visited`, "snug.db"}, {"document.cookie", "textContent = document.cookie", "snug.db"}},
	"permissions":   {{"navigator.geolocation", "navigator.geolocation.getCurrentPosition", "<input"}, {"navigator.mediaDevices", "navigator.mediaDevices.getUserMedia", `type="file"`}, {"Notification", "Notification.requestPermission", `role="status"`}, {"Notification", `new Notification("Ready")`, `role="status"`}},
	"createtable":   {{"CREATE TABLE todos without IF NOT EXISTS", `snug.db.exec("CREATE TABLE todos`, "create table if not exists"}},
}

// carelessWorks are the habits the host makes work (hostkit's
// TestCarelessHabitsWork drives them in Chromium): they build --strict.
var carelessWorks = []string{"alert", "blanklink", "askfirst", "polling"}

// Issue 28, how it is checked: apps written the careless way, one habit
// each, are either refused by a strict build with the habit named on its
// own line (file:line:col, why, fix) and nothing else, or build clean.
func TestCarelessCorpusIsDiagnosedOnItsLine(t *testing.T) {
	files, _ := filepath.Glob("../testdata/corpus/careless/*.html")
	if len(files) != len(carelessDiagnosed)+len(carelessWorks) {
		t.Fatalf("%d careless apps, the test knows %d", len(files), len(carelessDiagnosed)+len(carelessWorks))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".html")
		t.Run(name, func(t *testing.T) {
			html, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Build(context.Background(), Options{Path: name + ".html", HTML: html, Runtime: []byte(testRuntime), Strict: true})
			want, refused := carelessDiagnosed[name]
			if !refused {
				if err != nil {
					t.Fatalf("a habit the host makes work fails the build: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("the strict build passed")
			}
			if len(res.Diagnostics) != len(want) {
				t.Errorf("%d diagnostics, want %d: %+v", len(res.Diagnostics), len(want), res.Diagnostics)
			}
			lines := strings.Split(string(html), "\n")
			for i, d := range res.Diagnostics {
				if i >= len(want) {
					break
				}
				w := want[i]
				if d.File != name+".html" || d.Line < 1 || d.Line > len(lines) || !strings.Contains(lines[d.Line-1], w.line) || d.Column < 1 {
					t.Errorf("%s:%d:%d: %s: not on the line holding %q", d.File, d.Line, d.Column, d.Message, w.line)
				}
				if !strings.Contains(d.Message, w.msg) || d.Why == "" || !strings.Contains(d.Fix, w.fix) {
					t.Errorf("%s:%d: %q why %q fix %q; want %q and a fix with %q", d.File, d.Line, d.Message, d.Why, d.Fix, w.msg, w.fix)
				}
			}
		})
	}
}
