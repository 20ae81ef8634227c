package mcpapps

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
)

// maxTransfers bounds the answers one instance holds in parts at once; the
// oldest goes when a new one comes.
const maxTransfers = 4

// instance is one open view of an app, as its handle names it: a broker
// session opened with the handle's instanceId (so it survives a restart of
// the server with the same secret), and the tool calls waiting for their
// terminal frames. It is the broker's Port.
type instance struct {
	user string
	app  string
	id   string
	sess *broker.Session

	mu        sync.Mutex
	waiters   map[string]chan frame.Frame // requestId -> its tool call
	transfers map[string]*transfer
	order     []string          // transfer ids, oldest first
	grants    map[string]string // requestId -> grant page URL of its NET_NOT_APPROVED
	client    *mcp.ServerSession
	used      time.Time
}

type transfer struct{ parts []string }

// instanceKey names c's instance in Server.instances: the user and the
// instanceId, so that no user's call ever finds another user's instance.
func instanceKey(user, id string) string { return user + "\x00" + id }

// instance returns c's instance, opening its broker session for c's user on
// first use.
func (s *Server) instance(c caller) (*instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("mcpapps: the server is shutting down")
	}
	k := instanceKey(c.user, c.Instance)
	inst := s.instances[k]
	if inst == nil || inst.app != c.App {
		inst = &instance{user: c.user, app: c.App, id: c.Instance, waiters: map[string]chan frame.Frame{}, transfers: map[string]*transfer{}, grants: map[string]string{}}
		sess, err := s.broker.OpenUserInstance(c.user, c.App, c.Instance, inst)
		if err != nil {
			return nil, fmt.Errorf("mcpapps: open instance: %w", err)
		}
		inst.sess = sess
		s.instances[k] = inst
	}
	inst.mu.Lock()
	inst.used = s.opts.Now()
	inst.mu.Unlock()
	return inst, nil
}

// Send is the broker's port: a terminal frame goes to the tool call waiting
// for its requestId. Streaming text has no way to the view (a host's bridge
// drops progress) and host-ready and host events have no listener here.
func (inst *instance) Send(f frame.Frame, _ []byte) {
	rid := frame.RequestIDOf(f)
	if rid == "" {
		return
	}
	if r, ok := f.(*frame.AppResponse); ok && r.OK && r.Streaming != nil && *r.Streaming {
		return
	}
	inst.mu.Lock()
	ch := inst.waiters[rid]
	delete(inst.waiters, rid)
	inst.mu.Unlock()
	if ch != nil {
		ch <- f // buffered: never blocks the broker's latch
	}
}

// do hands raw to the broker and waits for its terminal frame. A frame the
// broker refuses without an answer (a requestId already used) is the tool's
// error; a call whose context ends (the view's notifications/cancelled,
// through the host) cancels the request in the broker, as app-cancel does.
func (inst *instance) do(ctx context.Context, raw []byte, rid string) (frame.Frame, *mcp.CallToolResult) {
	ch := make(chan frame.Frame, 1)
	inst.mu.Lock()
	if rid != "" {
		if inst.waiters[rid] != nil {
			inst.mu.Unlock()
			return nil, toolError(fmt.Sprintf("requestId %q is in flight on this instance", rid))
		}
		inst.waiters[rid] = ch
	}
	inst.mu.Unlock()
	v := inst.sess.Receive(ctx, raw)
	select {
	case f := <-ch:
		return f, nil
	default:
	}
	if v.Verdict != "accept" {
		inst.forget(rid)
		msg := v.Message
		if msg == "" {
			msg = "the frame was not accepted"
		}
		return nil, toolError(msg)
	}
	select {
	case f := <-ch:
		return f, nil
	case <-ctx.Done():
		cancel, err := frame.Marshal(&frame.AppCancel{RequestID: rid, InstanceID: inst.sess.InstanceID()})
		if err == nil {
			inst.sess.Receive(context.Background(), cancel)
		}
		inst.forget(rid)
		return nil, toolError("cancelled")
	}
}

func (inst *instance) forget(rid string) {
	inst.mu.Lock()
	delete(inst.waiters, rid)
	inst.mu.Unlock()
}

func (inst *instance) setClient(ss *mcp.ServerSession) {
	inst.mu.Lock()
	inst.client = ss
	inst.mu.Unlock()
}

func (inst *instance) clientSession() *mcp.ServerSession {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	return inst.client
}

func (inst *instance) putGrant(rid, url string) {
	inst.mu.Lock()
	inst.grants[rid] = url
	inst.mu.Unlock()
}

func (inst *instance) takeGrant(rid string) string {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	g := inst.grants[rid]
	delete(inst.grants, rid)
	return g
}

// putParts keeps an answer's remaining parts and names the transfer.
func (inst *instance) putParts(parts []string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := base64.RawURLEncoding.EncodeToString(b[:])
	inst.mu.Lock()
	defer inst.mu.Unlock()
	inst.transfers[id] = &transfer{parts: parts}
	inst.order = append(inst.order, id)
	for len(inst.order) > maxTransfers {
		delete(inst.transfers, inst.order[0])
		inst.order = inst.order[1:]
	}
	return id
}

// nextPart hands out a transfer's next part, once.
func (inst *instance) nextPart(id string) (part string, more, ok bool) {
	inst.mu.Lock()
	defer inst.mu.Unlock()
	t := inst.transfers[id]
	if t == nil || len(t.parts) == 0 {
		return "", false, false
	}
	part, t.parts = t.parts[0], t.parts[1:]
	if len(t.parts) == 0 {
		delete(inst.transfers, id)
		for i, o := range inst.order {
			if o == id {
				inst.order = append(inst.order[:i], inst.order[i+1:]...)
				break
			}
		}
	}
	return part, len(t.parts) > 0, true
}

// expire closes the broker sessions of instances unused for Idle (their
// requests end, the agent forgets their budget); a later call with the same
// handle opens a fresh one.
func (s *Server) expire() {
	defer close(s.done)
	t := time.NewTicker(min(s.opts.Idle/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		now := s.opts.Now()
		var idle []*instance
		s.mu.Lock()
		for id, inst := range s.instances {
			inst.mu.Lock()
			old := now.Sub(inst.used) > s.opts.Idle && len(inst.waiters) == 0
			inst.mu.Unlock()
			if old {
				delete(s.instances, id)
				idle = append(idle, inst)
			}
		}
		s.mu.Unlock()
		for _, inst := range idle {
			inst.sess.Close()
		}
	}
}
