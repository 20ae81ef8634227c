package relay

import (
	"strings"
	"testing"
)

func texts(msgs [][]byte) string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m)
	}
	return strings.Join(out, " ")
}

// A waiting streaming message is replaced in its place by a newer one of
// the same slot and request; other requests, other slots and messages
// without a key (terminals) are never replaced, so nothing is reordered
// around them.
func TestQueueCoalescesInPlace(t *testing.T) {
	q := newQueue(1<<20, 1<<20)
	// While the writer is idle and little waits, nothing is replaced.
	q.pushSlot("a", coalesceKey{rid: "r0"}, []byte("a:r0:1"))
	q.pushSlot("a", coalesceKey{rid: "r0"}, []byte("a:r0:2"))
	msgs, _, _ := q.take()
	if texts(msgs) != "a:r0:1 a:r0:2" {
		t.Fatalf("idle writer: took %q", texts(msgs))
	}
	// The writer is writing what it took: the page is behind.
	s := coalesceKey{rid: "r1"}
	q.pushSlot("a", s, []byte("a:r1:1"))
	q.pushSlot("a", coalesceKey{rid: "r1", inspect: true}, []byte("i:r1:1"))
	q.pushSlot("b", s, []byte("b:r1:1"))
	q.pushSlot("a", coalesceKey{rid: "r2"}, []byte("a:r2:1"))
	q.pushSlot("a", s, []byte("a:r1:22"))
	q.pushSlot("a", coalesceKey{rid: "r1", inspect: true}, []byte("i:r1:2"))
	q.pushSlot("a", coalesceKey{}, []byte("a:r1:end"))
	q.pushSlot("b", s, []byte("b:r1:2"))
	q.push([]byte("apps"))
	msgs, ended, ok := q.take()
	q.written(nil)
	if want := "a:r1:22 i:r1:2 b:r1:2 a:r2:1 a:r1:end apps"; !ok || texts(msgs) != want || len(ended) != 0 {
		t.Fatalf("took %q (ended %v), want %q", texts(msgs), ended, want)
	}
	// Once taken, a message is on its way: a newer one is queued after it.
	q.pushSlot("a", coalesceKey{rid: "r3"}, []byte("a:r3:1"))
	msgs, _, _ = q.take()
	q.pushSlot("a", coalesceKey{rid: "r3"}, []byte("a:r3:2"))
	q.pushSlot("a", coalesceKey{rid: "r3"}, []byte("a:r3:3"))
	more, _, _ := q.take()
	if texts(msgs) != "a:r3:1" || texts(more) != "a:r3:3" {
		t.Fatalf("took %q then %q", texts(msgs), texts(more))
	}
	q.written(nil)
	// With the writer idle, a slot with much waiting is coalesced too.
	big := make([]byte, coalesceAfter)
	q.pushSlot("a", coalesceKey{rid: "r4"}, big)
	q.pushSlot("a", coalesceKey{rid: "r4"}, []byte("a:r4:2"))
	if msgs, _, _ = q.take(); texts(msgs) != "a:r4:2" {
		t.Fatalf("a big backlog was not coalesced: %d messages", len(msgs))
	}
	if q.bytes != 0 {
		t.Fatalf("bytes after take: %d", q.bytes)
	}
}

// A slot past its budget is ended alone: its waiting messages go, the page
// is told, later messages for it are refused, and the other slot's
// replaceable messages still coalesce at their new places.
func TestQueueEndsTheSlotPastItsBudget(t *testing.T) {
	q := newQueue(1<<20, 10)
	q.busy = true // the writer is writing: streaming frames coalesce
	q.pushSlot("b", coalesceKey{rid: "r"}, []byte("b1"))
	q.pushSlot("a", coalesceKey{}, []byte("a-123"))
	q.pushSlot("b", coalesceKey{}, []byte("b-end"))
	if q.pushSlot("a", coalesceKey{}, []byte("a-45678")) {
		t.Fatal("the message past the budget was queued")
	}
	if q.pushSlot("a", coalesceKey{}, []byte("a")) {
		t.Fatal("a message for the ended slot was queued")
	}
	q.pushSlot("b", coalesceKey{rid: "r"}, []byte("b2"))
	msgs, ended, _ := q.take()
	got := texts(msgs)
	if !strings.HasPrefix(got, "b2 b-end {\"t\":\"ended\",\"slot\":\"a\",\"reason\":\"this app") || len(ended) != 1 || ended[0] != "a" {
		t.Fatalf("took %q, ended %v", got, ended)
	}
	// A new mount of the slot id starts afresh.
	q.revive("a")
	if !q.pushSlot("a", coalesceKey{}, []byte("a")) {
		t.Fatal("a revived slot refused a message")
	}
}

// Past the connection's budget the slot with the most waiting is ended,
// not the connection; with no slot waiting, the connection is closed.
func TestQueueConnectionBudget(t *testing.T) {
	q := newQueue(20, 20)
	q.pushSlot("small", coalesceKey{}, []byte("s"))
	q.pushSlot("big", coalesceKey{}, []byte("bbbbbbbbbb"))
	if !q.pushSlot("small", coalesceKey{}, []byte("sssssssssss")) {
		t.Fatal("the small slot's message was refused")
	}
	msgs, ended, ok := q.take()
	if !ok || len(ended) != 1 || ended[0] != "big" || !strings.HasPrefix(texts(msgs), "s ") {
		t.Fatalf("took %q, ended %v", texts(msgs), ended)
	}
	if q.push([]byte(strings.Repeat("x", 21))) {
		t.Fatal("a connection message past the budget was queued")
	}
	if _, _, ok := q.take(); ok {
		t.Fatal("the queue is still open")
	}
}

// A frame's inspector row goes before whatever was pushed while the read
// loop held the queue (the frame's answer, when the broker answers at once),
// also when a slot ended during the hold took messages on both sides of
// that place out, and a replaceable message pushed during the hold is still
// replaced in its (moved) place. The row of an accepted request with
// nothing else waiting is left for its answer, and the sweep finds it due
// only once it has waited a whole generation.
func TestQueueHoldPutsTheRowFirst(t *testing.T) {
	q := newQueue(1<<20, 1<<20)
	q.push([]byte("before"))
	q.pushSlot("gone", coalesceKey{}, []byte("gone:1"))
	q.hold()
	stream := coalesceKey{rid: "r1"}
	q.pushSlot("a", stream, []byte("a:r1:1"))
	q.pushSlot("gone", coalesceKey{}, []byte("gone:2"))
	q.push([]byte("during"))
	q.mu.Lock()
	q.endLocked("gone", "test")
	q.mu.Unlock()
	row := inspectEntry{Dir: "in", Slot: "b", Type: "t", RequestID: "q", Verdict: "accept"}
	if flush, list := q.unhold(row, true, 5); !flush || list {
		t.Fatalf("unhold with messages pushed during the hold: flush %v list %v, want a flush", flush, list)
	}
	q.busy = true // the page is behind: the streaming frame is replaced in place
	q.pushSlot("a", stream, []byte("a:r1:2"))
	msgs, ended, _ := q.take()
	var got []string
	for _, m := range msgs {
		if strings.HasPrefix(string(m), `{"t":"inspect"`) {
			got = append(got, "ROW")
		} else if strings.HasPrefix(string(m), `{"t":"ended"`) {
			got = append(got, "ENDED")
		} else {
			got = append(got, string(m))
		}
	}
	if want := "before ROW a:r1:2 during ENDED"; strings.Join(got, " ") != want || len(ended) != 1 {
		t.Fatalf("took %q (ended %v), want %q", strings.Join(got, " "), ended, want)
	}
	q.written(nil)

	// An accepted request's row with nothing else waiting waits for its
	// answer; the sweep writes it two ticks later at the earliest.
	q.hold()
	if flush, list := q.unhold(row, true, 7); flush || !list {
		t.Fatalf("unhold of an accepted request's row alone: flush %v list %v, want it listed", flush, list)
	}
	q.hold()
	if flush, list := q.unhold(row, true, 8); flush || list {
		t.Fatalf("a second row while one waits: flush %v list %v, want neither (listed already)", flush, list)
	}
	if due, keep := q.due(7); due || !keep {
		t.Fatalf("due(7) = %v, %v: the row of generation 7 has not waited a period", due, keep)
	}
	if due, keep := q.due(8); !due || keep {
		t.Fatalf("due(8) = %v, %v: the row of generation 7 is due", due, keep)
	}
	if msgs, _, _ = q.take(); len(msgs) != 2 || q.late != 0 {
		t.Fatalf("took %d messages, late %d", len(msgs), q.late)
	}
	if due, keep := q.due(9); due || keep || q.listed {
		t.Fatalf("due(9) with nothing waiting = %v, %v (listed %v)", due, keep, q.listed)
	}
	// A row that is not an accepted request's goes now.
	q.hold()
	if flush, _ := q.unhold(row, false, 9); !flush {
		t.Fatal("a rejected frame's row was left waiting")
	}
}
