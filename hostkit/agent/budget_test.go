package agent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
)

// mapBudget is a Budget over a map, as a database would keep it: by
// (user, app), outside any one Bridge.
type mapBudget struct {
	mu sync.Mutex
	n  map[[2]string]int
}

func (b *mapBudget) Failures(_ context.Context, user, app string) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n[[2]string{user, app}], nil
}

func (b *mapBudget) Fail(_ context.Context, user, app string) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n[[2]string{user, app}]++
	return b.n[[2]string{user, app}], nil
}

func (b *mapBudget) Clear(_ context.Context, user, app string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.n, [2]string{user, app})
	return nil
}

// With Options.Budget the budget is the user's for the app: a new instance
// (a reconnect to another replica, a second Bridge) does not refill it,
// another user or app has its own, Forget keeps it, and ResetCaller clears it.
func TestBridgeBudgetOutlivesTheInstance(t *testing.T) {
	prose := "Sure! Here is what I found."
	fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
		wires[0].stream(w, chunked(prose, 10), true)
	})
	budget := &mapBudget{n: map[[2]string]int{}}
	replicaA := agent.NewBridge(wires[0].backend(t, fa.srv.URL), agent.Options{Budget: budget})
	replicaB := agent.NewBridge(wires[0].backend(t, fa.srv.URL), agent.Options{Budget: budget})
	ask := func(br *agent.Bridge, user, app, instance string) *frame.Error {
		var data json.RawMessage
		data, ferr := br.Ask(context.Background(), agent.Caller{User: user, App: app, Instance: instance}, appMessage("", "", ""), nil)
		if data != nil {
			t.Fatalf("prose parsed as %s", data)
		}
		return ferr
	}
	for i := 1; i < frame.ParseFailureBudget; i++ {
		if ferr := ask(replicaA, "alice", "todo", "i1"); *ferr.AttemptsRemaining != frame.ParseFailureBudget-i {
			t.Fatalf("attempt %d: %+v", i, ferr)
		}
	}
	replicaA.Forget("i1") // the instance ends; the user reconnects elsewhere
	ferr := ask(replicaB, "alice", "todo", "i2")
	if *ferr.AttemptsRemaining != 0 {
		t.Fatalf("a new instance on another replica got a fresh budget: %+v", ferr)
	}
	hits := fa.Hits()
	if ferr := ask(replicaB, "alice", "todo", "i3"); ferr.Retryable || fa.Hits() != hits {
		t.Fatalf("spent budget reached the agent: %+v", ferr)
	}
	if ferr := ask(replicaA, "bob", "todo", "i4"); *ferr.AttemptsRemaining != frame.ParseFailureBudget-1 {
		t.Fatalf("bob shares alice's budget: %+v", ferr)
	}
	if ferr := ask(replicaA, "alice", "notes", "i5"); *ferr.AttemptsRemaining != frame.ParseFailureBudget-1 {
		t.Fatalf("another app shares the budget: %+v", ferr)
	}
	if err := replicaA.ResetCaller(context.Background(), agent.Caller{User: "alice", App: "todo", Instance: "i9"}); err != nil {
		t.Fatal(err)
	}
	if ferr := ask(replicaB, "alice", "todo", "i3"); *ferr.AttemptsRemaining != frame.ParseFailureBudget-1 {
		t.Fatalf("after the user's reset: %+v", ferr)
	}
}
