// Package relayclient speaks the runner page's side of the relay protocol
// (docs/architecture.md, "The relay") over a real WebSocket: it mounts app
// slots, loads them, sends app frames as an iframe would and hands back the
// host's answers. Tests and load generators use it where a browser would add
// nothing but time; it is not a substitute for the runner page in tests of
// the page itself.
//
// Its limit: it plays a well-behaved page and app. It checks nothing the
// host sends beyond matching answers to requests.
package relayclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/frame"
)

// Client is one page connection. Its methods are safe for concurrent use.
type Client struct {
	ws     *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // the reader ended
	seq    atomic.Uint64

	wmu sync.Mutex // one writer at a time

	mu       sync.Mutex
	err      error                           // why the reader ended
	ready    map[string]chan string          // slot → instanceId, once
	waiting  map[string]chan frame.Frame     // slot+"\x00"+requestId → terminal
	audits   []json.RawMessage               // audit entries received
	events   map[string][]*frame.HostEvent   // slot → host events received
	confirms map[string]func(Confirm) string // nil: deny
}

// Confirm is a host dialog the page was asked to show.
type Confirm struct {
	ID, Slot, Kind, App, Method, URL string
}

// Dial connects to the relay at origin (http://host:port) as the runner page
// would: Origin is origin, and header adds to the request (a product's
// session cookie or a proxy's user header).
func Dial(ctx context.Context, origin string, header http.Header) (*Client, error) {
	h := http.Header{}
	for k, v := range header {
		h[k] = v
	}
	h.Set("Origin", origin)
	ws, resp, err := websocket.Dial(ctx, strings.Replace(origin, "http", "ws", 1)+"/ws", &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("relayclient: dial %s: HTTP %d: %w", origin, resp.StatusCode, err)
		}
		return nil, fmt.Errorf("relayclient: dial %s: %w", origin, err)
	}
	ws.SetReadLimit(4 * int64(frame.MaxDBFrameBytes))
	cctx, cancel := context.WithCancel(context.Background())
	c := &Client{ws: ws, ctx: cctx, cancel: cancel, done: make(chan struct{}),
		ready: map[string]chan string{}, waiting: map[string]chan frame.Frame{}}
	go c.read()
	return c, nil
}

// Close ends the connection and waits for its reader.
func (c *Client) Close() error {
	c.cancel()
	err := c.ws.Close(websocket.StatusNormalClosure, "")
	<-c.done
	return err
}

// Err is why the connection ended (nil while it is up).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Audits returns the audit entries received so far.
func (c *Client) Audits() []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]json.RawMessage(nil), c.audits...)
}

// Events returns the host events slot's app received so far (hints such
// as connection-event), oldest first.
func (c *Client) Events(slot string) []*frame.HostEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*frame.HostEvent(nil), c.events[slot]...)
}

// OnConfirm answers the host's dialogs for slot with f's decision
// ("once", "always" or "deny"); without it every dialog is denied.
func (c *Client) OnConfirm(slot string, f func(Confirm) string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.confirms == nil {
		c.confirms = map[string]func(Confirm) string{}
	}
	c.confirms[slot] = f
}

func (c *Client) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ws.Write(c.ctx, websocket.MessageText, b)
}

// Mount creates slot for app and loads it, as the page does for a new
// iframe, and returns the instanceId of the host-ready that answers.
func (c *Client) Mount(ctx context.Context, slot, app string) (string, error) {
	ch := make(chan string, 1)
	c.mu.Lock()
	c.ready[slot] = ch
	c.mu.Unlock()
	if err := c.send(map[string]string{"t": "mount", "slot": slot, "app": app}); err != nil {
		return "", fmt.Errorf("relayclient: mount: %w", err)
	}
	if err := c.send(map[string]string{"t": "load", "slot": slot}); err != nil {
		return "", fmt.Errorf("relayclient: load: %w", err)
	}
	select {
	case id := <-ch:
		return id, nil
	case <-c.done:
		return "", fmt.Errorf("relayclient: mount %s: connection ended: %w", slot, c.Err())
	case <-ctx.Done():
		return "", fmt.Errorf("relayclient: mount %s: no host-ready: %w", slot, ctx.Err())
	}
}

// Request sends f (a request frame with its requestId and instanceId set)
// from slot and returns the host's terminal answer.
func (c *Client) Request(ctx context.Context, slot string, f frame.Frame, requestID string) (frame.Frame, error) {
	answer, err := c.Start(ctx, slot, f, requestID)
	if err != nil {
		return nil, err
	}
	return answer()
}

// Start sends f as Request does and returns at once; answer waits for the
// host's terminal answer. Requests started one after the other are sent
// in that order, as an app that does not await each one sends them.
func (c *Client) Start(ctx context.Context, slot string, f frame.Frame, requestID string) (answer func() (frame.Frame, error), err error) {
	raw, err := frame.Marshal(f)
	if err != nil {
		return nil, err
	}
	key := slot + "\x00" + requestID
	ch := make(chan frame.Frame, 1)
	c.mu.Lock()
	c.waiting[key] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.waiting, key)
		c.mu.Unlock()
	}
	if err := c.send(struct {
		T     string          `json:"t"`
		Slot  string          `json:"slot"`
		Frame json.RawMessage `json:"frame"`
	}{"frame", slot, raw}); err != nil {
		forget()
		return nil, fmt.Errorf("relayclient: send: %w", err)
	}
	return func() (frame.Frame, error) {
		defer forget()
		select {
		case ans := <-ch:
			return ans, nil
		case <-c.done:
			return nil, fmt.Errorf("relayclient: connection ended before the answer: %w", c.Err())
		case <-ctx.Done():
			return nil, fmt.Errorf("relayclient: no answer: %w", ctx.Err())
		}
	}, nil
}

// NextID returns a fresh requestId.
func (c *Client) NextID() string { return fmt.Sprintf("r%d", c.seq.Add(1)) }

// DB sends one db-request from slot (its instanceId and requestId filled
// in) and returns the db-response.
func (c *Client) DB(ctx context.Context, slot, instanceID string, r frame.DBRequest) (*frame.DBResponse, error) {
	r.InstanceID = instanceID
	r.RequestID = c.NextID()
	ans, err := c.Request(ctx, slot, &r, r.RequestID)
	if err != nil {
		return nil, err
	}
	resp, ok := ans.(*frame.DBResponse)
	if !ok {
		return nil, fmt.Errorf("relayclient: answer %T to a db-request", ans)
	}
	return resp, nil
}

// Net sends one net-request from slot and returns the net-response.
func (c *Client) Net(ctx context.Context, slot, instanceID string, r frame.NetRequest) (*frame.NetResponse, error) {
	r.InstanceID = instanceID
	r.RequestID = c.NextID()
	ans, err := c.Request(ctx, slot, &r, r.RequestID)
	if err != nil {
		return nil, err
	}
	resp, ok := ans.(*frame.NetResponse)
	if !ok {
		return nil, fmt.Errorf("relayclient: answer %T to a net-request", ans)
	}
	return resp, nil
}

// hostMsg is one host → page message (the parts this client reads).
type hostMsg struct {
	T     string          `json:"t"`
	Slot  string          `json:"slot"`
	Frame json.RawMessage `json:"frame"`
	Entry json.RawMessage `json:"entry"`
	ID    string          `json:"id"`
	Kind  string          `json:"kind"`
	App   string          `json:"app"`
	Meth  string          `json:"method"`
	URL   string          `json:"url"`
}

func (c *Client) read() {
	defer close(c.done)
	for {
		_, data, err := c.ws.Read(c.ctx)
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		var m hostMsg
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		switch m.T {
		case "frame":
			c.frame(m.Slot, m.Frame)
		case "audit":
			c.mu.Lock()
			c.audits = append(c.audits, m.Entry)
			c.mu.Unlock()
		case "confirm":
			c.mu.Lock()
			f := c.confirms[m.Slot]
			c.mu.Unlock()
			decision := "deny"
			if f != nil {
				decision = f(Confirm{ID: m.ID, Slot: m.Slot, Kind: m.Kind, App: m.App, Method: m.Meth, URL: m.URL})
			}
			go func() { _ = c.send(map[string]string{"t": "confirm-answer", "id": m.ID, "decision": decision}) }()
		}
	}
}

func (c *Client) frame(slot string, raw json.RawMessage) {
	f, err := frame.Parse(raw)
	if err != nil || f == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch f := f.(type) {
	case *frame.HostReady:
		if ch := c.ready[slot]; ch != nil {
			delete(c.ready, slot)
			ch <- f.InstanceID
		}
	case *frame.AppResponse:
		if f.Streaming != nil && *f.Streaming {
			return // streaming text
		}
		c.deliver(slot, f.RequestID, f)
	case *frame.DBResponse:
		c.deliver(slot, f.RequestID, f)
	case *frame.NetResponse:
		c.deliver(slot, f.RequestID, f)
	case *frame.OpenURLResult:
		c.deliver(slot, f.RequestID, f)
	case *frame.HostEvent:
		if c.events == nil {
			c.events = map[string][]*frame.HostEvent{}
		}
		c.events[slot] = append(c.events[slot], f)
	}
}

func (c *Client) deliver(slot, rid string, f frame.Frame) {
	if ch := c.waiting[slot+"\x00"+rid]; ch != nil {
		select {
		case ch <- f:
		default:
		}
	}
}
