package site

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/frame"
)

func TestBuildInlinesAndHashes(t *testing.T) {
	p, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	html := string(p.HTML)
	if strings.Contains(html, cssMarker) || strings.Contains(html, jsMarker) {
		t.Fatal("a marker was left in the page")
	}
	for _, want := range []string{`data-snug-confirm="once"`, `data-snug-confirm-remember`, `data-snug-confirm="deny"`, `data-armed="false"`, `id="frames"`, `id="audit"`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Count(p.CSP, "'sha256-") != 2 {
		t.Errorf("CSP %q: want a hash for the script and one for the style", p.CSP)
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "*"} {
		if strings.Contains(p.CSP, bad) {
			t.Errorf("CSP %q allows %s", p.CSP, bad)
		}
	}
}

// TestNoBundlerAtStart holds the runner page and the document server to
// what snuggen gen built (dist/, prelude.min.js): neither links esbuild, so
// a host does not bundle anything when it starts.
func TestNoBundlerAtStart(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".", "../hostkit/server").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "github.com/evanw/esbuild") {
		t.Fatal("site or hostkit/server imports esbuild: the page or the prelude is bundled at run time")
	}
}

// The page is built at startup, so it must come out the same every time.
func TestBuildDeterministic(t *testing.T) {
	a, err := buildPage()
	if err != nil {
		t.Fatal(err)
	}
	b, err := buildPage()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.HTML, b.HTML) || a.CSP != b.CSP {
		t.Fatal("two builds of the page differ")
	}
}

func BenchmarkBuild(b *testing.B) {
	for b.Loop() {
		if _, err := buildPage(); err != nil {
			b.Fatal(err)
		}
	}
}

// The page's limit on a relayed frame is the generated largest size class,
// and its frame types and codes are the generated ones, defined as SNUG_GEN
// in the page's one script before the bundle that reads them.
func TestBuildCarriesGeneratedConstants(t *testing.T) {
	for _, typ := range []string{frame.TypeAppMessage, frame.TypeDBRequest, frame.TypeNetRequest, frame.TypeAppEvent} {
		if c := frame.SizeClass(typ); c > MaxRelayedFrameBytes {
			t.Errorf("%s's size class %d is past the page's limit %d", typ, c, MaxRelayedFrameBytes)
		}
	}
	if MaxRelayedFrameBytes != frame.SizeClass(frame.TypeDBRequest) {
		t.Errorf("limit %d, want the db class %d, the largest today", MaxRelayedFrameBytes, frame.SizeClass(frame.TypeDBRequest))
	}
	p, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	html := string(p.HTML)
	if !strings.Contains(html, "<script>const SNUG_GEN={") {
		t.Fatal("the page's script does not start by defining SNUG_GEN")
	}
	if strings.Contains(html, "Code generated") {
		t.Fatal("a generated-code header was inlined into the page")
	}
	for _, want := range []string{frame.CodeParseFailed, frame.TypeOpenURLResult} {
		if !strings.Contains(html, want) {
			t.Errorf("the bundle lacks %s from the generated constants", want)
		}
	}
	if !strings.Contains(html, strconv.Itoa(MaxRelayedFrameBytes)) {
		t.Fatalf("the bundle lacks the limit %d", MaxRelayedFrameBytes)
	}
}

// The answers the page sends for a frame too large to relay are the host's:
// one row per frame type, each answer a valid frame of the paired response
// type carrying the code R1 gives, and the size rejection's code MALFORMED.
func TestTooLargeAnswersAreTheHosts(t *testing.T) {
	tl, err := tooLargeAnswers()
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.ByType) != len(frame.Types) {
		t.Fatalf("%d rows for %d frame types", len(tl.ByType), len(frame.Types))
	}
	codes := [3]string{frame.CodeMalformed, frame.CodeUnsupportedVersion, frame.CodeMalformed}
	check := func(typ string, row [3]int) {
		// The pairing and the error seat are the generated frame package's.
		want := frame.AnswerType(typ)
		for k, i := range row {
			f, err := frame.Parse(tl.Answers[i])
			if err != nil {
				t.Errorf("%s answer %d: %v", typ, k, err)
				continue
			}
			code, rid := "", frame.RequestIDOf(f)
			if e := frame.ErrorOf(f); e != nil {
				code = e.Code
			} else if reason, refused := frame.RefusalOf(f); refused {
				code, _, _ = strings.Cut(reason, ":")
			}
			if f.FrameType() != want || code != codes[k] || rid != tooLargeID {
				t.Errorf("%q answer %d: %s", typ, k, tl.Answers[i])
			}
		}
	}
	for _, typ := range frame.Types {
		check(typ, tl.ByType[typ])
	}
	check("", tl.Other)
}
