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
	calls     int // tool calls using it now (Server.instance to done)
}

type transfer struct{ parts []string }

// instanceKey names c's instance in Server.instances: the user and the
// instanceId, so that no user's call ever finds another user's instance.
func instanceKey(user, id string) string { return user + "\x00" + id }

// instance returns c's instance, opening its broker session for c's user on
// first use, for one tool call, which ends with done. A user at
// MaxInstances gives up their least recently used instance that no call
// uses; with none, the call is refused.
func (s *Server) instance(c caller) (*instance, error) {
	inst, gone, err := s.takeInstance(c)
	if gone != nil {
		gone.sess.Close() // outside s.mu, as expire closes its idle ones
	}
	return inst, err
}

// takeInstance is instance under s.mu; gone is an instance it took out of
// the tables, whose session the caller closes.
func (s *Server) takeInstance(c caller) (inst, gone *instance, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, errors.New("mcpapps: the server is shutting down")
	}
	k := instanceKey(c.user, c.Instance)
	inst = s.instances[k]
	if inst != nil && inst.app != c.App {
		gone = inst
		s.forget(k, inst)
		inst = nil
	}
	if inst == nil {
		if len(s.byUser[c.user]) >= s.opts.MaxInstances {
			old := s.leastUsed(c.user)
			if old == nil {
				return nil, gone, fmt.Errorf("mcpapps: this user's %d app instances are all answering calls; try again once one is done", s.opts.MaxInstances)
			}
			s.forget(instanceKey(old.user, old.id), old)
			gone = old
		}
		inst = &instance{user: c.user, app: c.App, id: c.Instance, waiters: map[string]chan frame.Frame{}, transfers: map[string]*transfer{}, grants: map[string]string{}}
		sess, err := s.broker.OpenUserInstance(c.user, c.App, c.Instance, inst)
		if err != nil {
			return nil, gone, fmt.Errorf("mcpapps: open instance: %w", err)
		}
		inst.sess = sess
		s.instances[k] = inst
		if s.byUser[c.user] == nil {
			s.byUser[c.user] = map[*instance]bool{}
		}
		s.byUser[c.user][inst] = true
	}
	inst.mu.Lock()
	inst.used = s.opts.Now()
	inst.calls++
	inst.mu.Unlock()
	return inst, gone, nil
}

// done ends a tool call's use of inst (Server.instance).
func (inst *instance) done() {
	inst.mu.Lock()
	inst.calls--
	inst.mu.Unlock()
}

// busy reports whether a tool call uses inst now (under inst.mu).
func (inst *instance) busy() bool { return inst.calls > 0 || len(inst.waiters) > 0 }

// forget takes inst out of the tables (under s.mu); its session is the
// caller's to close.
func (s *Server) forget(k string, inst *instance) {
	delete(s.instances, k)
	delete(s.byUser[inst.user], inst)
	if len(s.byUser[inst.user]) == 0 {
		delete(s.byUser, inst.user)
	}
}

// leastUsed is user's least recently used instance that no call uses, nil
// when every one is busy (under s.mu).
func (s *Server) leastUsed(user string) *instance {
	var lru *instance
	var at time.Time
	for inst := range s.byUser[user] {
		inst.mu.Lock()
		busy, used := inst.busy(), inst.used
		inst.mu.Unlock()
		if !busy && (lru == nil || used.Before(at)) {
			lru, at = inst, used
		}
	}
	return lru
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
			old := now.Sub(inst.used) > s.opts.Idle && !inst.busy()
			inst.mu.Unlock()
			if old {
				s.forget(id, inst)
				idle = append(idle, inst)
			}
		}
		s.mu.Unlock()
		for _, inst := range idle {
			inst.sess.Close()
		}
	}
}
