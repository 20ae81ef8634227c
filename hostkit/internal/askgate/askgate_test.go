package askgate

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Issue 28 item 4: a question from the user's click waits its turn, in
// order, past the per-minute number; the app's own questions are still
// refused while a dialog shows or a click's question waits, and past the
// per-minute number.
func TestClicksWaitTheirTurnAppRequestsAreLimited(t *testing.T) {
	g := New(2, nil)
	ctx := context.Background()
	if err := g.Reserve("a"); err != nil {
		t.Fatal(err)
	}
	if err := g.Reserve("a"); !errors.Is(err, ErrBusy) {
		t.Fatalf("the app's second question while one shows: %v, want ErrBusy", err)
	}
	turns := make(chan int, 3)
	for i := 1; i <= 3; i++ {
		started := make(chan struct{})
		go func() {
			close(started)
			if err := g.Wait(ctx, "a"); err != nil {
				t.Errorf("click %d: %v", i, err)
				return
			}
			turns <- i
		}()
		<-started
		// Wait until click i is in line, so the order is the clicks'.
		for deadline := time.Now().Add(5 * time.Second); ; {
			g.mu.Lock()
			n := len(g.apps["a"].waiting)
			g.mu.Unlock()
			if n == i {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("click %d never waited", i)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := g.Reserve("a"); !errors.Is(err, ErrBusy) {
		t.Fatalf("the app's own question jumped the clicks: %v", err)
	}
	for want := 1; want <= 3; want++ {
		g.Release("a")
		if got := <-turns; got != want {
			t.Fatalf("turn went to click %d, want %d", got, want)
		}
	}
	g.Release("a")
	// Four dialogs started within the minute, two allowed: clicks went past
	// the number, the app's own question does not.
	if err := g.Reserve("a"); !errors.Is(err, ErrRate) {
		t.Fatalf("the app's own question after four dialogs: %v, want ErrRate", err)
	}
	if err := g.Wait(ctx, "a"); err != nil {
		t.Fatalf("a click after four dialogs: %v", err)
	}
	g.Release("a")
}

func TestWaitIsBoundedAndLeavesOnCancel(t *testing.T) {
	g := New(6, nil)
	if err := g.Reserve("a"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, MaxWaiting)
	for range MaxWaiting {
		go func() { errs <- g.Wait(ctx, "a") }()
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		g.mu.Lock()
		n := len(g.apps["a"].waiting)
		g.mu.Unlock()
		if n == MaxWaiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the clicks never waited")
		}
		time.Sleep(time.Millisecond)
	}
	if err := g.Wait(context.Background(), "a"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a click past MaxWaiting: %v, want ErrBusy", err)
	}
	cancel()
	for range MaxWaiting {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled wait: %v", err)
		}
	}
	g.Release("a")
	if err := g.Reserve("a"); err != nil {
		t.Fatalf("after the waits left and the dialog ended: %v", err)
	}
}
