package browsertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Console records what a tab or frame writes to its console: the browser's
// own messages (the Log domain: a blocked form submission, a CSP or
// Permissions-Policy error, a failed load) and the page's console calls and
// uncaught exceptions (the Runtime domain).
type Console struct {
	mu   sync.Mutex
	msgs []string
}

// WatchConsole starts recording ctx's console until the test ends. Enabling
// the Log domain replays the entries the target logged before, so messages
// of a document's load are seen even when the test attaches afterwards.
func WatchConsole(t testing.TB, ctx context.Context) *Console {
	t.Helper()
	c := &Console{}
	lctx, stop := context.WithCancel(ctx)
	t.Cleanup(stop)
	if err := chromedp.Listen(lctx, func(ev any) {
		var m string
		switch e := ev.(type) {
		case *log.EventEntryAdded:
			m = fmt.Sprintf("%s %s: %s", e.Entry.Source, e.Entry.Level, e.Entry.Text)
		case *runtime.EventConsoleAPICalled:
			var args []string
			for _, a := range e.Args {
				if a.Value != nil {
					args = append(args, string(a.Value))
				} else {
					args = append(args, a.Description)
				}
			}
			m = fmt.Sprintf("console %s: %s", e.Type, strings.Join(args, " "))
		case *runtime.EventExceptionThrown:
			m = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				m += " " + e.ExceptionDetails.Exception.Description
			}
		default:
			return
		}
		c.mu.Lock()
		c.msgs = append(c.msgs, m)
		c.mu.Unlock()
	}); err != nil {
		t.Fatalf("watch the console: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if _, err := chromedp.Call(cctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable Runtime: %v", err)
	}
	if _, err := chromedp.Call(cctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable Log: %v", err)
	}
	return c
}

// Messages returns what was recorded so far, in order.
func (c *Console) Messages() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.msgs...)
}

// Clean fails the test with every recorded message when there is any.
func (c *Console) Clean(t testing.TB, where string) {
	t.Helper()
	if ms := c.Messages(); len(ms) > 0 {
		t.Errorf("the console of %s is not clean:\n  %s", where, strings.Join(ms, "\n  "))
	}
}
