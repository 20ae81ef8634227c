package openurl_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/openurl"
)

type confirmFunc func(ctx context.Context, p openurl.Prompt) (openurl.Answer, error)

func (f confirmFunc) ConfirmOpen(ctx context.Context, p openurl.Prompt) (openurl.Answer, error) {
	return f(ctx, p)
}

func req(url string) *frame.OpenURLRequest {
	return &frame.OpenURLRequest{RequestID: "r1", InstanceID: "i1", URL: url}
}

func TestAnswers(t *testing.T) {
	var shown openurl.Prompt
	yes := confirmFunc(func(ctx context.Context, p openurl.Prompt) (openurl.Answer, error) {
		shown = p
		return openurl.Opened, nil
	})
	no := confirmFunc(func(ctx context.Context, p openurl.Prompt) (openurl.Answer, error) { return openurl.Declined, nil })
	noUI := confirmFunc(func(ctx context.Context, p openurl.Prompt) (openurl.Answer, error) { return 0, openurl.ErrNoUI })
	gone := confirmFunc(func(ctx context.Context, p openurl.Prompt) (openurl.Answer, error) {
		return 0, errors.New("page closed")
	})
	url := "https://example.com/a/long/path?x=1&y=2#section"
	for _, c := range []struct {
		name   string
		c      openurl.Confirmer
		status string
	}{
		{"opened", yes, frame.StatusOpened},
		{"declined", no, frame.StatusDeclined},
		{"no UI", noUI, frame.StatusRefused},
		{"nil confirmer", nil, frame.StatusRefused},
		{"dialog failed", gone, frame.StatusRefused},
	} {
		var o *openurl.Opener
		if c.c == nil {
			o = openurl.New(nil, openurl.Options{})
		} else {
			o = openurl.New(c.c, openurl.Options{})
		}
		r := o.Open(context.Background(), "links", req(url))
		if r.Status != c.status || r.RequestID != "r1" {
			t.Errorf("%s: %+v", c.name, r)
		}
		if err := r.Validate(); err != nil {
			t.Errorf("%s: invalid result: %v", c.name, err)
		}
		if c.status == frame.StatusRefused && (r.Reason == nil || *r.Reason == "") {
			t.Errorf("%s: a refusal without a reason", c.name)
		}
	}
	if shown.URL != url || shown.App != "links" {
		t.Errorf("the dialog showed %+v: want the full URL and the host's app key", shown)
	}
}

// One dialog per app at a time: a second request while the first waits is
// refused, and another app is not held up.
func TestOneDialogPerApp(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	c := confirmFunc(func(ctx context.Context, p openurl.Prompt) (openurl.Answer, error) {
		started <- struct{}{}
		if p.App == "a" {
			<-release
		}
		return openurl.Opened, nil
	})
	o := openurl.New(c, openurl.Options{})
	done := make(chan *frame.OpenURLResult)
	go func() { done <- o.Open(context.Background(), "a", req("https://example.com/")) }()
	<-started
	if r := o.Open(context.Background(), "a", req("https://example.com/2")); r.Status != frame.StatusRefused || !strings.Contains(*r.Reason, "waiting") {
		t.Fatalf("second while the first waits: %+v", r)
	}
	if r := o.Open(context.Background(), "b", req("https://example.com/")); r.Status != frame.StatusOpened {
		t.Fatalf("another app: %+v", r)
	}
	close(release)
	if r := <-done; r.Status != frame.StatusOpened {
		t.Fatalf("first: %+v", r)
	}
}

func TestRateLimit(t *testing.T) {
	now := time.Unix(0, 0)
	o := openurl.New(confirmFunc(func(ctx context.Context, p openurl.Prompt) (openurl.Answer, error) { return openurl.Declined, nil }),
		openurl.Options{PerMinute: 2, Now: func() time.Time { return now }})
	for i := 0; i < 2; i++ {
		if r := o.Open(context.Background(), "a", req("https://example.com/")); r.Status != frame.StatusDeclined {
			t.Fatalf("%d: %+v", i, r)
		}
	}
	if r := o.Open(context.Background(), "a", req("https://example.com/")); r.Status != frame.StatusRefused || !strings.Contains(*r.Reason, "rate limit") {
		t.Fatalf("third in a minute: %+v", r)
	}
	now = now.Add(time.Minute)
	if r := o.Open(context.Background(), "a", req("https://example.com/")); r.Status != frame.StatusDeclined {
		t.Fatalf("a minute later: %+v", r)
	}
}

func TestResultReasonIsCut(t *testing.T) {
	r := openurl.Result("r", frame.StatusRefused, strings.Repeat("✓", 400))
	if n := utf8.RuneCountInString(*r.Reason); n != openurl.MaxReason {
		t.Fatalf("reason has %d code points", n)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if r := openurl.Result("r", frame.StatusOpened, ""); r.Reason != nil {
		t.Fatal("an empty reason is sent")
	}
}

// A frame that did not come through frame.Parse is checked all the same:
// nothing is shown for a URL the strict frame refuses.
func TestRefusesWhatTheFrameRefuses(t *testing.T) {
	asked := false
	o := openurl.New(confirmFunc(func(ctx context.Context, p openurl.Prompt) (openurl.Answer, error) {
		asked = true
		return openurl.Opened, nil
	}), openurl.Options{})
	for _, u := range []string{"http://example.com/", "https://user:pw@example.com/", "https://exa mple.com/", "javascript:alert(1)", "https://example.com/\t"} {
		r := o.Open(context.Background(), "a", req(u))
		if r.Status != frame.StatusRefused || !strings.Contains(*r.Reason, frame.CodeMalformed) {
			t.Errorf("%q: %+v", u, r)
		}
	}
	if asked {
		t.Fatal("the user was asked about a refused URL")
	}
}

// Issue 28 item 4: a second request for the URL the app's dialog is asking
// about (a link the app's own click handler and the runtime's link route
// both take) shares that question and its answer: one dialog, not two.
func TestSameURLSharesTheQuestion(t *testing.T) {
	release := make(chan struct{})
	var asked atomic.Int32
	c := confirmFunc(func(ctx context.Context, p openurl.Prompt) (openurl.Answer, error) {
		asked.Add(1)
		<-release
		return openurl.Opened, nil
	})
	o := openurl.New(c, openurl.Options{})
	first := make(chan *frame.OpenURLResult)
	go func() { first <- o.Open(context.Background(), "a", req("https://example.com/doc")) }()
	for asked.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan *frame.OpenURLResult)
	r2 := &frame.OpenURLRequest{RequestID: "r2", InstanceID: "i1", URL: "https://example.com/doc"}
	go func() { second <- o.Open(context.Background(), "a", r2) }()
	for openurl.Joined(o, "a", "https://example.com/doc") == 0 {
		time.Sleep(time.Millisecond)
	}
	// Another URL is still another question: refused while one shows.
	if r := o.Open(context.Background(), "a", req("https://example.com/other")); r.Status != frame.StatusRefused {
		t.Fatalf("another URL while the first is asked: %+v", r)
	}
	close(release)
	if r := <-first; r.Status != frame.StatusOpened {
		t.Fatalf("first: %+v", r)
	}
	if r := <-second; r.Status != frame.StatusOpened || r.RequestID != "r2" {
		t.Fatalf("the same URL again: %+v", r)
	}
	if n := asked.Load(); n != 1 {
		t.Fatalf("the user was asked %d times", n)
	}
}
