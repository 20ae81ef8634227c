package docs

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// maxEntry is the decision record's bound on one entry, in characters: the
// record asks for ~1,500 (the decision, why, the alternatives, one line of
// evidence); the slack above it is for an entry that names long commands.
const maxEntry = 1600

// diaryStamp is a clock time of a run ("05:48 UTC"): dated measurements
// belong in bench/PERF.md, and an entry names the command instead.
var diaryStamp = regexp.MustCompile(`\b\d{1,2}:\d\d(–\d{1,2}:\d\d)? UTC\b`)

// entries splits the record into its entries: a line starting "- " opens
// one, and lines that follow until a blank line, a heading or the next
// entry continue it. It returns each entry with the line it starts on.
func entries(text string) (starts []int, bodies []string) {
	open := false
	for i, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "- "):
			starts = append(starts, i+1)
			bodies = append(bodies, line)
			open = true
		case line == "" || strings.HasPrefix(line, "#"):
			open = false
		case open:
			bodies[len(bodies)-1] += "\n" + line
		}
	}
	return starts, bodies
}

// TestDecisionsStayARecord: every entry of docs/decisions.md is at most
// maxEntry characters and dates no run; issue 27 found one entry of 32,208
// characters with twenty timestamps.
func TestDecisionsStayARecord(t *testing.T) {
	b, err := os.ReadFile("decisions.md")
	if err != nil {
		t.Fatal(err)
	}
	starts, bodies := entries(string(b))
	if len(bodies) < 100 {
		t.Fatalf("decisions.md has %d entries; the record has more than 100, so the split is wrong", len(bodies))
	}
	for i, body := range bodies {
		if n := utf8.RuneCountInString(body); n > maxEntry {
			t.Errorf("decisions.md:%d: an entry of %d characters (at most %d): keep the decision, why, the alternatives and one line of evidence; move measurements to bench/PERF.md", starts[i], n, maxEntry)
		}
		if m := diaryStamp.FindString(body); m != "" {
			t.Errorf("decisions.md:%d: %q dates a run: name the command and put dated figures in bench/PERF.md", starts[i], m)
		}
	}
}

// TestEntriesSplit: the split that TestDecisionsStayARecord relies on.
func TestEntriesSplit(t *testing.T) {
	starts, bodies := entries("# T\n\nintro\n- **a** one\n  two\n- **b**\n\n## H\n- **c**\n")
	want := []string{"- **a** one\n  two", "- **b**", "- **c**"}
	if len(bodies) != len(want) {
		t.Fatalf("got %q", bodies)
	}
	for i := range want {
		if bodies[i] != want[i] {
			t.Errorf("entry %d: got %q, want %q", i, bodies[i], want[i])
		}
	}
	if starts[0] != 4 || starts[2] != 9 {
		t.Errorf("starts %v", starts)
	}
}
