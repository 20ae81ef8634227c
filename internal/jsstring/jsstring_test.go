package jsstring

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/snuggen/snuggen/internal/testenv"
)

var cases = []string{"", "plain", `quote " and \ backslash`, "nul\x00 bell\a tab\t nl\n cr\r del\x7f esc\x1b",
	"é 😀 \U000e0001 tag", "line\u2028para\u2029end", "</script><!--", "invalid \xff\xfe byte"}

// Quote's output is JSON that reads back as the text (invalid UTF-8 as
// U+FFFD, as encoding/json reads it).
func TestQuoteIsJSON(t *testing.T) {
	for _, s := range cases {
		var back string
		if err := json.Unmarshal([]byte(Quote(s)), &back); err != nil {
			t.Fatalf("%q: %s is not JSON: %v", s, Quote(s), err)
		}
		want := string(bytes.ToValidUTF8([]byte(s), []byte("\uFFFD")))
		if s == "invalid \xff\xfe byte" {
			want = "invalid \uFFFD\uFFFD byte"
		}
		if back != want {
			t.Errorf("%q reads back as %q", s, back)
		}
	}
}

// Quote's output is a JS string literal node evaluates to the same text.
func TestQuoteIsJS(t *testing.T) {
	node := testenv.Node(t)
	var src bytes.Buffer
	src.WriteString("const got = [")
	for _, s := range cases {
		src.WriteString(Quote(s) + ",")
	}
	src.WriteString("];\nprocess.stdout.write(JSON.stringify(got));\n")
	p := filepath.Join(t.TempDir(), "q.js")
	if err := os.WriteFile(p, src.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, p).Output()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("node: %s %v", out, err)
	}
	for i, s := range cases {
		var want string
		_ = json.Unmarshal([]byte(Quote(s)), &want)
		if got[i] != want {
			t.Errorf("%q: node reads %q, JSON %q", s, got[i], want)
		}
	}
}
