package mcpapps

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdinGrace bounds how long Run keeps answering after its input ends: a
// request read just before the client closed stdin still gets its answer
// (a desktop client that writes its last request and closes the pipe reads
// stdout to the end), unless it takes longer than this.
const StdinGrace = 30 * time.Second

// settling is a transport whose connection (settleConn) keeps MCP's two
// promises about requests that go-sdk's stream transports do not keep
// themselves: a request the client cancelled (notifications/cancelled) gets
// no response, and a request read before the input ended gets one.
type settling struct{ mcp.Transport }

func (t settling) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &settleConn{Connection: c, pending: map[jsonrpc.ID]bool{}, cancelled: map[jsonrpc.ID]bool{}, idle: make(chan struct{}, 1)}, nil
}

type settleConn struct {
	mcp.Connection

	mu        sync.Mutex
	pending   map[jsonrpc.ID]bool // calls read and not answered
	cancelled map[jsonrpc.ID]bool // calls the client cancelled: their answers are dropped
	idle      chan struct{}       // a token when pending may have emptied
}

// Read notes each call and cancellation; when the input ends it waits for
// the calls read before (StdinGrace at most) so that their answers go out.
func (c *settleConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.settle(ctx)
		return nil, err
	}
	if r, ok := msg.(*jsonrpc.Request); ok {
		c.mu.Lock()
		switch {
		case r.IsCall():
			c.pending[r.ID] = true
		case r.Method == "notifications/cancelled":
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(r.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil && c.pending[id] {
					delete(c.pending, id)
					c.cancelled[id] = true
					c.signal()
				}
			}
		}
		c.mu.Unlock()
	}
	return msg, nil
}

// Write drops the answer of a cancelled call and notes every other answer.
func (c *settleConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		drop := c.cancelled[r.ID]
		delete(c.cancelled, r.ID)
		delete(c.pending, r.ID)
		c.signal()
		c.mu.Unlock()
		if drop {
			return nil
		}
	}
	return c.Connection.Write(ctx, msg)
}

// signal wakes settle; c.mu is held.
func (c *settleConn) signal() {
	select {
	case c.idle <- struct{}{}:
	default:
	}
}

// settle waits until every call read has been answered or cancelled, ctx
// ends or StdinGrace passes.
func (c *settleConn) settle(ctx context.Context) {
	t := time.NewTimer(StdinGrace)
	defer t.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.idle:
		case <-ctx.Done():
			return
		case <-t.C:
			return
		}
	}
}
