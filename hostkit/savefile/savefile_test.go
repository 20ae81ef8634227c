package savefile_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/savefile"
)

type confirmFunc func(ctx context.Context, p savefile.Prompt) (savefile.Answer, error)

func (f confirmFunc) ConfirmSave(ctx context.Context, p savefile.Prompt) (savefile.Answer, error) {
	return f(ctx, p)
}

func req(name string, data []byte, mime ...string) *frame.SaveFileRequest {
	r := &frame.SaveFileRequest{RequestID: "r1", InstanceID: "i1", Name: name, Data: base64.StdEncoding.EncodeToString(data)}
	if len(mime) > 0 {
		r.MimeType = &mime[0]
	}
	return r
}

// TestNames: the names apps give and the attacks a hostile app would try.
func TestNames(t *testing.T) {
	for _, c := range []struct{ in, want, refused string }{
		{"notes.md", "notes.md", ""},
		{"Zürich café.csv", "Zürich café.csv", ""},
		{"東京.txt", "東京.txt", ""},
		{"report 10:30.txt", "report 10_30.txt", ""},
		{`a<b>c"d|e?f*g.txt`, "a_b_c_d_e_f_g.txt", ""},
		{"export-2026-01-15T10:30:00.000Z.json", "export-2026-01-15T10_30_00.000Z.json", ""},
		{"page.html", "page.html", ""},
		{"archive.tar.gz", "archive.tar.gz", ""},
		{"", "", "empty"},
		{"../../.bashrc", "", "not a path"},
		{"dir/file.txt", "", "not a path"},
		{`C:\Windows\x.txt`, "", "not a path"},
		{"invoice\u202etxt.exe", "", "U+202E"},
		{"a\u200bb.txt", "", "U+200B"},
		{"a\u2066b.txt", "", "U+2066"},
		{"a\nb.txt", "", "U+000A"},
		{"a\x00b.txt", "", "U+0000"},
		{"a\u2028b.txt", "", "U+2028"},
		{"a\ue000b.txt", "", "U+E000"},
		{"a\ufffeb.txt", "", "U+FFFE"},
		{".", "", "not a file name"},
		{"..", "", "not a file name"},
		{".profile", "", "hides"},
		{" notes.txt", "", "space"},
		{"notes.txt ", "", "space"},
		{"notes.", "", "ends with '.'"},
		{"CON", "", "device"},
		{"con.txt", "", "device"},
		{"Lpt1.log", "", "device"},
		{"setup.exe", "", ".exe"},
		{"photo.jpg.exe", "", ".exe"},
		{"run.BAT", "", ".bat"},
		{"start.sh", "", ".sh"},
		{"x.lnk", "", ".lnk"},
		{"a.js", "", ".js"},
		{"a.desktop", "", ".desktop"},
		{strings.Repeat("é", 128) + ".txt", "", "bytes of UTF-8"},
	} {
		got, err := savefile.Name(c.in)
		switch {
		case c.refused == "" && (err != nil || got != c.want):
			t.Errorf("Name(%q) = %q, %v; want %q", c.in, got, err, c.want)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("Name(%q) = %q, %v; want a refusal naming %q", c.in, got, err, c.refused)
		}
	}
}

func TestMimeType(t *testing.T) {
	for in, ok := range map[string]bool{"text/csv": true, "application/vnd.sqlite3": true, "image/svg+xml": true, "TEXT/Plain": true,
		"text": false, "text/": false, "/csv": false, "text/plain; charset=utf-8": false, "text/<b>": false, "a/b/c": false} {
		if _, err := savefile.MimeType(in); (err == nil) != ok {
			t.Errorf("MimeType(%q): %v", in, err)
		}
	}
}

// TestSave: the user's answer decides; a refusal never reaches the dialog
// and says why; the dialog gets the checked name, type and bytes.
func TestSave(t *testing.T) {
	var shown savefile.Prompt
	asked := 0
	yes := confirmFunc(func(_ context.Context, p savefile.Prompt) (savefile.Answer, error) {
		asked++
		shown = p
		return savefile.Saved, nil
	})
	no := confirmFunc(func(context.Context, savefile.Prompt) (savefile.Answer, error) {
		asked++
		return savefile.Declined, nil
	})
	noUI := confirmFunc(func(context.Context, savefile.Prompt) (savefile.Answer, error) { return 0, savefile.ErrNoUI })
	gone := confirmFunc(func(context.Context, savefile.Prompt) (savefile.Answer, error) { return 0, errors.New("closed") })
	for _, c := range []struct {
		name   string
		c      savefile.Confirmer
		r      *frame.SaveFileRequest
		status string
		reason string
	}{
		{"saved", yes, req("a b:c.csv", []byte("x,y\n"), "text/csv"), frame.StatusSaved, ""},
		{"declined", no, req("a.txt", []byte("x")), frame.StatusDeclined, "declined"},
		{"no UI", noUI, req("a.txt", []byte("x")), frame.StatusRefused, "no user interface"},
		{"nil confirmer", nil, req("a.txt", []byte("x")), frame.StatusRefused, "no dialog"},
		{"dialog failed", gone, req("a.txt", []byte("x")), frame.StatusRefused, "without an answer"},
		{"bad name", yes, req("x\u202etxt.exe", []byte("x")), frame.StatusRefused, "U+202E"},
		{"bad type", yes, req("a.txt", []byte("x"), "text/plain; charset=utf-8"), frame.StatusRefused, "mimeType"},
		{"bad base64", yes, &frame.SaveFileRequest{RequestID: "r1", InstanceID: "i1", Name: "a.txt", Data: "!!!"}, frame.StatusRefused, "base64"},
		{"too large", yes, req("a.bin", make([]byte, frame.MaxArtifactBytes+1)), frame.StatusRefused, "past the"},
	} {
		asked = 0
		s := savefile.New(c.c, savefile.Options{})
		if c.c == nil {
			s = savefile.New(nil, savefile.Options{})
		}
		r := s.Save(context.Background(), "notes", c.r)
		reason := ""
		if r.Reason != nil {
			reason = *r.Reason
		}
		if r.Status != c.status || r.RequestID != "r1" || !strings.Contains(reason, c.reason) {
			t.Errorf("%s: %s %q, want %s with %q", c.name, r.Status, reason, c.status, c.reason)
		}
		if err := r.Validate(); err != nil {
			t.Errorf("%s: the result is no valid frame: %v", c.name, err)
		}
		if c.status == frame.StatusRefused && c.c != nil && c.reason != "no user interface" && c.reason != "without an answer" && asked != 0 {
			t.Errorf("%s: the user was asked about a file the host refuses", c.name)
		}
	}
	if shown.App != "notes" || shown.Name != "a b_c.csv" || shown.MimeType != "text/csv" || string(shown.Data) != "x,y\n" {
		t.Errorf("the dialog was shown %+v", shown)
	}
}

// TestOneDialogAndRate: one dialog per app at a time, others not held up;
// six a minute.
func TestOneDialogAndRate(t *testing.T) {
	now := time.Unix(1000, 0)
	release := make(chan struct{})
	waiting := make(chan string, 2)
	block := confirmFunc(func(ctx context.Context, p savefile.Prompt) (savefile.Answer, error) {
		waiting <- p.App
		<-release
		return savefile.Saved, nil
	})
	s := savefile.New(block, savefile.Options{Now: func() time.Time { return now }})
	done := make(chan *frame.SaveFileResult, 2)
	go func() { done <- s.Save(context.Background(), "a", req("1.txt", []byte("x"))) }()
	<-waiting
	if r := s.Save(context.Background(), "a", req("2.txt", []byte("x"))); r.Status != frame.StatusRefused || !strings.Contains(*r.Reason, "waiting") {
		t.Fatalf("a second dialog of the same app: %s", r.Status)
	}
	go func() { done <- s.Save(context.Background(), "b", req("3.txt", []byte("x"))) }()
	if app := <-waiting; app != "b" {
		t.Fatalf("asked for %q", app)
	}
	close(release)
	for range 2 {
		if r := <-done; r.Status != frame.StatusSaved {
			t.Fatalf("%s", r.Status)
		}
	}

	yes := confirmFunc(func(context.Context, savefile.Prompt) (savefile.Answer, error) { return savefile.Saved, nil })
	s = savefile.New(yes, savefile.Options{Now: func() time.Time { return now }})
	for i := range savefile.DefaultPerMinute {
		if r := s.Save(context.Background(), "a", req("x.txt", []byte("x"))); r.Status != frame.StatusSaved {
			t.Fatalf("save %d: %s", i, r.Status)
		}
	}
	if r := s.Save(context.Background(), "a", req("x.txt", []byte("x"))); r.Status != frame.StatusRefused || !strings.Contains(*r.Reason, "rate limit") {
		t.Fatalf("past the rate: %s", r.Status)
	}
	now = now.Add(61 * time.Second)
	if r := s.Save(context.Background(), "a", req("x.txt", []byte("x"))); r.Status != frame.StatusSaved {
		t.Fatalf("a minute later: %s", r.Status)
	}
}
