package broker_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/relay"
)

// budgetAgent is a host's own agent handler whose parse-failure budgets
// live elsewhere (a host's database, say); its Reset fails while that
// store is unavailable.
type budgetAgent struct {
	broker.AgentHandler
	down error
}

func (a budgetAgent) Reset(instanceKey string) error { return a.down }

// reset sends the page's reset for slot and returns the relay's inspect
// entry for it.
func (p *page) reset(slot string) msg {
	p.t.Helper()
	from := p.count()
	p.send(map[string]string{"t": "reset", "slot": slot})
	m, _ := p.wait(from, waitLimit, func(m msg) bool {
		return m.T == "inspect" && m.Entry.Type == "reset" && m.Entry.Slot == slot
	})
	return m
}

// A user's reset that cannot be done is answered RESET_FAILED, saying why:
// the agent handler's own reset failed, the host offers no agent, the
// instance navigated away, no app is in the slot, the host is shutting
// down. A reset that can be done is accepted.
func TestResetFailuresAreResetFailed(t *testing.T) {
	failed := func(t *testing.T, m msg, why string) {
		t.Helper()
		if m.Entry.Verdict != "reject" || m.Entry.Code != frame.CodeResetFailed || !strings.Contains(m.Entry.Message, why) {
			t.Errorf("reset of %s: %+v, want %s saying %q", m.Entry.Slot, m.Entry, frame.CodeResetFailed, why)
		}
	}

	h := newHost(t, broker.Options{Agent: budgetAgent{mockAgent(0), errors.New("the budget store is unavailable")}}, relay.Options{})
	p := h.page(t)
	p.start("s1", "notes")
	failed(t, p.reset("s1"), "the budget store is unavailable")
	failed(t, p.reset("s9"), "no app is mounted")

	// The instance navigated away (a second load): there is nothing left
	// to reset.
	h2 := newHost(t, broker.Options{Agent: mockAgent(0)}, relay.Options{})
	p2 := h2.page(t)
	p2.start("s1", "notes")
	if m := p2.reset("s1"); m.Entry.Verdict != "accept" || m.Entry.Code != "" {
		t.Fatalf("reset of a live instance: %+v", m.Entry)
	}
	p2.load("s1")
	failed(t, p2.reset("s1"), "navigated away")
	p2.start("s2", "notes")
	if err := h2.b.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	failed(t, p2.reset("s2"), "shutting down")

	// A host without an agent has no budget to reset.
	h3 := newHost(t, broker.Options{}, relay.Options{})
	p3 := h3.page(t)
	p3.start("s1", "notes")
	failed(t, p3.reset("s1"), "offers no agent")
}
