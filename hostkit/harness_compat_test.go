package hostkit_test

// Transitional: the hostkit tests' old browser-helper names, each one line
// over internal/browsertest, for tests written against them before the
// harnesses merged. New tests call browsertest directly; delete this file
// once nothing calls these.

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
)

func newTab(t *testing.T) context.Context {
	t.Helper()
	return browsertest.NewTab(t)
}

func openRunner(t *testing.T, h *hostkit.Host, apps ...string) context.Context {
	t.Helper()
	return browsertest.OpenRunner(t, h.URL(), apps...).Tab
}

func slots(t *testing.T, tab context.Context) []string {
	t.Helper()
	return browsertest.Attach(t, tab).Slots()
}

func appFrame(t *testing.T, tab context.Context, slot string) context.Context {
	t.Helper()
	return browsertest.Attach(t, tab).SlotFrame(slot)
}

func counts(t *testing.T, tab context.Context) browsertest.Counts {
	t.Helper()
	return browsertest.Attach(t, tab).Counts()
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	return browsertest.Eval[T](t, ctx, js)
}

func evalWithin[T any](t *testing.T, ctx context.Context, js string, d time.Duration) T {
	t.Helper()
	return browsertest.EvalWithin[T](t, ctx, js, d)
}

func waitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	browsertest.WaitFor(t, ctx, what, js)
}

func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	browsertest.Do(t, ctx, what, actions...)
}
