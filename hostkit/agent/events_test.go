package agent_test

import (
	"testing"
	"time"
)

// hangGuard turns a hang into a test failure with a name. It is not a
// speed: every wait it bounds is for something that happens at once or
// never (an agent that never answers, a wait of an hour), so a correct
// bridge is far inside it on any machine and a broken one is past it on
// every machine.
const hangGuard = 30 * time.Second

// finishes runs f and fails the test if it has not returned within
// hangGuard.
func finishes(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(hangGuard):
		t.Fatalf("%s: still running after %v (hung)", what, hangGuard)
	}
}

// happens waits for an event on ch, failing the test if none comes within
// hangGuard.
func happens(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(hangGuard):
		t.Fatalf("waiting for %s: nothing after %v", what, hangGuard)
	}
}
