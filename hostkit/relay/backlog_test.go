package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/openai"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/relay"
	"github.com/snuggen/snuggen/internal/testenv"
)

// fastAgent is an OpenAI-compatible chat server on loopback that streams a
// reply as fast as it can write: for a request whose envelope's action is
// "long", {"message":"<n letters>"} in chunks of chunk bytes, one SSE event
// each; for any other action {"message":"short"} in one event.
func fastAgent(t *testing.T, n, chunk int) (url, long string) {
	t.Helper()
	long = `{"message":"` + strings.Repeat("abcdefghij", n/10) + `"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		reply := `{"message":"short"}`
		if strings.Contains(string(body), `\"action\":\"long\"`) {
			reply = long
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < len(reply); i += chunk {
			piece, _ := json.Marshal(reply[i:min(i+chunk, len(reply))])
			if _, err := fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%s}}]}\n\n", piece); err != nil {
				return
			}
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL, long
}

// relayWith serves a relay over b with opts on loopback and returns a page
// connected to it.
func relayWith(t *testing.T, b *broker.Broker, opts relay.Options) *slowPage {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	opts.Origin, opts.Host = "http://"+addr, addr
	rl, err := relay.New(b, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: rl}}
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b.Shutdown(ctx)
		rl.Close(ctx)
		srv.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {opts.Origin}}})
	if err != nil {
		t.Fatalf("dial the relay: %v", err)
	}
	ws.SetReadLimit(1 << 24)
	t.Cleanup(func() { ws.CloseNow() })
	p := &slowPage{t: t, ctx: ctx, ws: ws, gate: make(chan struct{})}
	p.cond = sync.NewCond(&p.mu)
	go p.read()
	return p
}

// slowPage is the runner page's end of the relay reading at its own pace:
// it waits delay before each message, and reads nothing before resume. Its
// reader only keeps what it reads; the test's goroutine decodes it, so a
// starved machine slows the test, not the reading.
type slowPage struct {
	t    *testing.T
	ctx  context.Context
	ws   *websocket.Conn
	gate chan struct{} // closed when the page reads

	mu        sync.Mutex
	cond      *sync.Cond
	delay     time.Duration
	raw       [][]byte
	closedErr error

	log []relayMsg // raw decoded, by the test's goroutine (sync)
}

type relayMsg struct {
	T      string          `json:"t"`
	Slot   string          `json:"slot"`
	Reason string          `json:"reason"`
	Frame  json.RawMessage `json:"frame"`
	f      frame.Frame
}

func (p *slowPage) resume(delay time.Duration) {
	p.setDelay(delay)
	close(p.gate)
}

func (p *slowPage) setDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

func (p *slowPage) read() {
	<-p.gate
	for {
		p.mu.Lock()
		d := p.delay
		p.mu.Unlock()
		if d > 0 {
			time.Sleep(d)
		}
		_, data, err := p.ws.Read(p.ctx)
		p.mu.Lock()
		if err != nil {
			p.closedErr = err
		} else {
			p.raw = append(p.raw, data)
		}
		p.cond.Broadcast()
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// sync decodes what was read since the last call and reports the error the
// connection ended with, if it did.
func (p *slowPage) sync() error {
	p.mu.Lock()
	fresh := p.raw[len(p.log):]
	err := p.closedErr
	p.mu.Unlock()
	for _, data := range fresh {
		var m relayMsg
		_ = json.Unmarshal(data, &m)
		if m.T == "frame" {
			m.f, _ = frame.Parse(m.Frame)
		}
		p.log = append(p.log, m)
	}
	return err
}

func (p *slowPage) send(msg string) {
	p.t.Helper()
	if err := p.ws.Write(p.ctx, websocket.MessageText, []byte(msg)); err != nil {
		p.t.Fatalf("send %s: %v", msg, err)
	}
}

// waitFor waits until match holds for a message, failing when the
// connection ends first.
func (p *slowPage) waitFor(what string, match func(relayMsg) bool) relayMsg {
	p.t.Helper()
	stop := context.AfterFunc(p.ctx, func() { p.mu.Lock(); p.cond.Broadcast(); p.mu.Unlock() })
	defer stop()
	for i := 0; ; {
		err := p.sync()
		for ; i < len(p.log); i++ {
			if match(p.log[i]) {
				return p.log[i]
			}
		}
		if err != nil || p.ctx.Err() != nil {
			p.t.Fatalf("waiting for %s: the connection ended (%v) after %d messages", what, err, len(p.log))
		}
		p.mu.Lock()
		for len(p.raw) == len(p.log) && p.closedErr == nil && p.ctx.Err() == nil {
			p.cond.Wait()
		}
		p.mu.Unlock()
	}
}

func (p *slowPage) instance(slot string) string {
	p.t.Helper()
	m := p.waitFor(slot+"'s host-ready", func(m relayMsg) bool {
		_, ok := m.f.(*frame.HostReady)
		return m.Slot == slot && ok
	})
	return m.f.(*frame.HostReady).InstanceID
}

func (p *slowPage) terminal(slot, rid string) *frame.AppResponse {
	p.t.Helper()
	m := p.waitFor(slot+"'s answer to "+rid, func(m relayMsg) bool {
		r, ok := m.f.(*frame.AppResponse)
		return ok && m.Slot == slot && r.RequestID == rid && !(r.OK && r.Streaming != nil && *r.Streaming)
	})
	return m.f.(*frame.AppResponse)
}

func ask(slot, inst, rid, action string) string {
	return fmt.Sprintf(`{"t":"frame","slot":%q,"frame":{"v":1,"type":"snug:app-message","requestId":%q,"instanceId":%q,"appId":"x","action":%q}}`, slot, rid, inst, action)
}

// A fast agent streams a long reply to one app while the page reads
// slowly. Streaming text is cumulative, so the relay keeps only the latest
// frame of the stream while the page is behind: the page stays connected,
// the other app on it is answered meanwhile, and the final text is whole.
// Without coalescing the stream is about 110 MB of frames and the page was
// cut off at 64 MiB, remounting every app on it.
func TestFastStreamToSlowPageKeepsThePage(t *testing.T) {
	url, long := fastAgent(t, 60_000, 16)
	be, err := openai.New(openai.Config{BaseURL: url, Model: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	b := broker.New(broker.Options{Agent: broker.Agent(agent.NewBridge(be, agent.Options{}))})
	p := relayWith(t, b, relay.Options{})
	p.resume(2 * time.Millisecond)
	for _, s := range []string{"s1", "s2"} {
		p.send(`{"t":"mount","slot":"` + s + `","app":"` + s + `"}`)
		p.send(`{"t":"load","slot":"` + s + `"}`)
	}
	i1, i2 := p.instance("s1"), p.instance("s2")
	p.send(ask("s1", i1, "long", "long"))
	// The stream is under way; the other app asks in the middle of it.
	p.waitFor("the first streaming frame", func(m relayMsg) bool { return m.Slot == "s1" && m.f != nil })
	p.send(ask("s2", i2, "other", "short"))
	if r := p.terminal("s2", "other"); !r.OK || string(r.Data) != `{"message":"short"}` {
		t.Fatalf("the other app's answer: %+v", r)
	}
	r := p.terminal("s1", "long")
	var want map[string]string
	_ = json.Unmarshal([]byte(long), &want)
	var data map[string]string
	if !r.OK || json.Unmarshal(r.Data, &data) != nil || data["message"] != want["message"] {
		t.Fatalf("the final answer is not the whole reply (ok %v, %d bytes of data)", r.OK, len(r.Data))
	}
	if err := p.sync(); err != nil {
		t.Fatalf("the page was cut off: %v", err)
	}
	// The streaming frames arrive in order, each text extending the last,
	// none after the terminal; most were coalesced away.
	streamed, prev, done := 0, "", false
	for _, m := range p.log {
		if m.T == "ended" {
			t.Fatalf("a slot was ended: %+v", m)
		}
		r, ok := m.f.(*frame.AppResponse)
		if !ok || m.Slot != "s1" {
			continue
		}
		if done {
			t.Fatalf("a frame after the terminal: %s", m.Frame)
		}
		if !(r.OK && r.Streaming != nil && *r.Streaming) {
			done = true
			continue
		}
		if !strings.HasPrefix(*r.Text, prev) || len(*r.Text) <= len(prev) {
			t.Fatalf("streaming text %d does not extend the one before", streamed)
		}
		prev = *r.Text
		streamed++
	}
	chunks := len(long) / 16
	t.Logf("%d streaming frames reached the page for %d chunks", streamed, chunks)
	if streamed >= chunks/2 {
		t.Errorf("%d streaming frames for %d chunks: the page was not behind, the test proves nothing", streamed, chunks)
	}
}

// An app that floods its own answers (thousands of requests refused at
// once, each with an answer and inspect entries) while the page reads
// nothing is ended alone when its share of the queue passes its budget:
// the page is told, and the page's other app and the connection go on.
// Before, the whole page was cut off.
func TestFloodingAppIsEndedAlone(t *testing.T) {
	// The flood must end the slot before the relay's 10 s write timeout
	// ends the connection; the race detector slows the relay past that.
	testenv.SkipUnderRace(t, "ending the flooding slot within the write timeout")
	b := broker.New(broker.Options{Agent: broker.AgentFunc(func(ctx context.Context, c broker.Call, m *frame.AppMessage, stream func(string)) *frame.AppResponse {
		final := false
		return &frame.AppResponse{OK: true, Streaming: &final, Data: json.RawMessage(`{"message":"ok"}`)}
	})})
	p := relayWith(t, b, relay.Options{MaxQueueBytes: 4 << 20, MaxSlotQueueBytes: 1 << 20})
	for _, s := range []string{"bad", "good"} {
		p.send(`{"t":"mount","slot":"` + s + `","app":"` + s + `"}`)
		p.send(`{"t":"load","slot":"` + s + `"}`)
	}
	p.resume(0)
	ibad, igood := p.instance("bad"), p.instance("good")
	p.setDelay(time.Second) // from now on the page barely reads
	// No db is offered: each request is refused with a terminal at once.
	// 40,000 of them are some 20 MB of answers and inspect entries, more
	// than the sockets' buffers hold, so the relay's queue fills.
	flood := make([]string, 0, 40_000)
	for i := range cap(flood) {
		flood = append(flood, fmt.Sprintf(`{"t":"frame","slot":"bad","frame":{"v":1,"type":"snug:db-request","requestId":"f%d","instanceId":%q,"op":"kvGet","key":"k"}}`, i, ibad))
	}
	for _, m := range flood {
		p.send(m)
	}
	p.send(ask("good", igood, "after", "short"))
	p.setDelay(0)
	ended := p.waitFor("the flooding app's end", func(m relayMsg) bool { return m.T == "ended" })
	if ended.Slot != "bad" || !strings.Contains(ended.Reason, "behind") {
		t.Fatalf("ended %+v, want slot bad", ended)
	}
	if r := p.terminal("good", "after"); !r.OK {
		t.Fatalf("the other app's answer: %+v", r.Error)
	}
	// The ended app is sent nothing more; the connection is alive.
	p.send(ask("good", igood, "later", "short"))
	p.terminal("good", "later")
	if err := p.sync(); err != nil {
		t.Fatalf("the page was cut off: %v", err)
	}
	seen := false
	for _, m := range p.log {
		if m.T == "ended" {
			seen = true
			continue
		}
		if seen && m.Slot == "bad" && m.T == "frame" {
			t.Fatalf("a frame for the ended app after its end: %s", m.Frame)
		}
	}
}

// With the inspector off an answer is written by the goroutine that has it,
// in one write that does not wait; what the socket does not take at once is
// left to a writer goroutine. A page that stops reading while tens of
// thousands of answers (more than the sockets' buffers) are due still gets
// every one, whole and in order, once it reads again, and stays connected.
func TestAnswersPastTheSocketBuffersArriveInOrder(t *testing.T) {
	testenv.SkipUnderRace(t, "a page that barely reads for the flood, within the write timeout")
	b := broker.New(broker.Options{})
	p := relayWith(t, b, relay.Options{NoInspect: true, MaxQueueBytes: 64 << 20, MaxSlotQueueBytes: 64 << 20})
	p.send(`{"t":"mount","slot":"s1","app":"s1"}`)
	p.send(`{"t":"load","slot":"s1"}`)
	p.resume(0)
	inst := p.instance("s1")
	p.setDelay(time.Second) // from now on the page barely reads
	const n = 40_000        // some 9 MB of answers: past the sockets' buffers
	for i := range n {
		p.send(fmt.Sprintf(`{"t":"frame","slot":"s1","frame":{"v":1,"type":"snug:db-request","requestId":"f%d","instanceId":%q,"op":"kvGet","key":"k"}}`, i, inst))
	}
	p.setDelay(0)
	last := fmt.Sprintf("f%d", n-1)
	p.waitFor("the last answer", func(m relayMsg) bool {
		r, ok := m.f.(*frame.DBResponse)
		return ok && r.RequestID == last
	})
	if err := p.sync(); err != nil {
		t.Fatalf("the page was cut off: %v", err)
	}
	next := 0
	for _, m := range p.log {
		r, ok := m.f.(*frame.DBResponse)
		if !ok {
			continue
		}
		if m.T == "ended" {
			t.Fatalf("the slot was ended: %+v", m)
		}
		if want := fmt.Sprintf("f%d", next); r.RequestID != want {
			t.Fatalf("answer %d is %s, want %s", next, r.RequestID, want)
		}
		next++
	}
	if next != n {
		t.Fatalf("%d answers reached the page, want %d", next, n)
	}
}
