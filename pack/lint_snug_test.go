package pack

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/frame"
)

// The regexps the snug checks' scanners replaced, kept as the reference
// TestSnugScansAreTheRegexps and FuzzSnugScans hold them to.
var snugScanRegexps = []struct {
	name string
	re   *regexp.Regexp
	scan func(string) [][]int
}{
	{"onEvent", regexp.MustCompile(`\bsnug\s*\.\s*(?:on|off)\s*\(\s*(["'` + "`" + `])([^"'` + "`" + `\n]{0,64})(["'` + "`" + `])`), findOnEvent},
	{"themeCmp", regexp.MustCompile(`\.theme\s*[!=]==?\s*["'` + "`" + `](?:dark|light)["'` + "`" + `]|["'` + "`" + `](?:dark|light)["'` + "`" + `]\s*[!=]==?\s*[\w$.]*\.theme\b[^.\w$]`), findThemeCmp},
	{"snugField", regexp.MustCompile(`\bsnug\s*\.\s*(theme|locale|instanceId)\b`), findSnugField},
	{"readyField", regexp.MustCompile(`\bsnug\s*\.\s*ready\s*\.\s*(theme|capabilities|locale|instanceId)\b`), findReadyField},
	{"themeData", regexp.MustCompile(`\bsnug\s*\.\s*on\s*\(\s*["'` + "`" + `]` + regexp.QuoteMeta(frame.EventThemeChange) + `["'` + "`" + `]\s*,\s*(?:async\s*)?\(?\s*\{\s*(mode|tokens)\b`), findThemeData},
}

// snugScanCases are hand-made texts at the edges of each pattern.
var snugScanCases = []string{
	`snug.on("theme")`, `snug . off ( 'x' )`, "snug.on(`a'", `snug.on("a\n")`, `xsnug.on("a")`, `$snug.on("a")`, `_snug.on("a")`,
	`é snug.on("a")`, "snug\t.\fon\r(\n\"a\"", `snug.onoff("a")`, `snug.once("a")`, `snug.on(x, "a")`, `snug.on("` + strings.Repeat("a", 64) + `")`,
	`snug.on("` + strings.Repeat("a", 65) + `")`, `snug.on("` + strings.Repeat("é", 64) + `")`, `snug.on("` + strings.Repeat("é", 65) + `")`,
	"snug.on(\"\xff\xfe\")", `snug.on("snug.on('a')")`, `snug.snug.on("a")`, `snugsnug.on("a")`, `snug.on(""`, `snug.on("`,
	`x.theme === "dark"`, `x.theme=="light"`, `x.theme !== 'dark'`, `x.theme ==== "dark"`, `x.theme = "dark"`, `x.themes === "dark"`,
	`"dark" === x.theme;`, `"dark"===theme.theme)`, `'light' != a.b.theme.mode`, `"dark" == .theme `, `"dark" === x.theme`, `"dark" === x.theme$`,
	"\"dark\" === x.theme\u00e9", "\"dark\" === x.theme\xff", `"dark" ==x.theme.theme `, `"Dark" === x.theme `, `"dark' === x.theme `, `x.theme === "dark" === x.theme `,
	`snug.theme`, `snug.themes`, `snug.theme$`, `snug .locale`, `snug.instanceId.x`, `snug.instanceid`, `asnug.theme`, `snug.ready.theme`,
	`snug.ready . capabilities`, `snug.ready.capabilitiesX`, `snug.readyy.theme`, `snug.ready.locale_`, `snug.ready.instanceId`,
	`snug.on("theme-change", ({ mode }) => 1)`, `snug.on('theme-change',async({tokens})=>1)`, "snug.on(`theme-change`, async ( { mode",
	`snug.on("theme-change", asyncx({ mode })`, `snug.on("theme-change", ({ modes })`, `snug.on("theme-change", (( { mode })`,
	`snug.on("theme-change", { mode }`, `snug.on("theme-change" , async{mode}`, `snug.on("theme-changed", ({ mode })`,
	`snug`, `snug.`, `.theme`, `"dark"`, `"dark" ==`, `"dark" === `, ``,
}

func snugScanTexts(t testing.TB) []string {
	texts := slices.Clone(snugScanCases)
	var files []string
	for _, pattern := range []string{"../examples/*/*.html", "../examples/*/*.js", "../runtime-js/src/*.js", "testdata/*/in/*", "../bench/build-app/src/*.js"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found %d files to read; run from the pack directory", len(files))
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		texts = append(texts, s)
		for i := 0; i+40 <= len(s); i += 7 {
			texts = append(texts, s[i:i+40])
		}
	}
	return texts
}

func checkSnugScans(t *testing.T, s string) {
	for _, c := range snugScanRegexps {
		want := c.re.FindAllStringSubmatchIndex(s, -1)
		if c.name == "themeCmp" {
			want = c.re.FindAllStringIndex(s, -1)
		}
		if got := c.scan(s); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s(%q) = %v, the regexp says %v", c.name, s, got, want)
		}
	}
}

// TestSnugScansAreTheRegexps: each scanner of the snug checks finds what its
// regexp finds (every match, its place and its submatches), on the example
// apps, the runtime's sources, the pack cases, every 40-byte window of them
// and hand-made edge cases.
func TestSnugScansAreTheRegexps(t *testing.T) {
	n := 0
	for _, s := range snugScanTexts(t) {
		checkSnugScans(t, s)
		for _, c := range snugScanRegexps {
			n += len(c.re.FindAllStringIndex(s, -1))
		}
	}
	if n < 50 {
		t.Errorf("the texts hold only %d matches: the comparison tests little", n)
	}
}

// FuzzSnugScans holds the scanners to the regexps on any text
// (go test -fuzz FuzzSnugScans ./pack).
func FuzzSnugScans(f *testing.F) {
	for _, s := range snugScanCases {
		f.Add(s)
	}
	f.Fuzz(checkSnugScans)
}

// Issue 28 item 9: a write of PRAGMA user_version in the app's SQL is
// named on its line with the Snug way (a version table and
// snug.db.script); reading it, and the words in a comment, are not.
func TestUserVersionWriteIsDiagnosed(t *testing.T) {
	page := "<!doctype html><title>T</title><script type=\"module\">\n" +
		"// PRAGMA user_version = 1 in a comment\n" +
		"const v = (await snug.db.query(\"PRAGMA user_version\"))[0].user_version;\n" +
		"await snug.db.exec(\"pragma Main.USER_VERSION=2\");\n" +
		"await snug.db.exec(`PRAGMA user_version(${v + 1})`);\n" +
		"</script>"
	res, _ := Build(context.Background(), Options{Path: "index.html", HTML: []byte(page), Runtime: []byte(testRuntime)})
	var lines []int
	for _, d := range res.Diagnostics {
		if strings.Contains(d.Message, "user_version") {
			lines = append(lines, d.Line)
			if !strings.Contains(d.Fix, "snug.db.script(") {
				t.Errorf("the fix reads %q", d.Fix)
			}
		}
	}
	if !slices.Equal(lines, []int{4, 5}) {
		t.Fatalf("user_version diagnosed on lines %v, want the two writes, 4 and 5", lines)
	}
}
