package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/events"
	"github.com/snuggen/snuggen/internal/csscolor"
)

// conn is one page connection: its slots, its outbound queue and its
// pending confirm dialogs.
type conn struct {
	rl   *Relay
	user string // Options.Authenticate's answer at the upgrade; "" without one
	ws   *websocket.Conn
	cc   *corkConn   // what ws writes to
	pr   *pageReader // what ws reads from, and where the read loop waits
	// inline is flush's fast route: on but in the test that holds it to
	// the writer goroutine's.
	inline bool
	q      *queue
	// writers counts the writer goroutines the queue started (at most one
	// runs at a time).
	writers sync.WaitGroup
	// enc and inflight belong to whoever is the writer (the queue's
	// running: a writer goroutine or flush's claimant): the encoder of the
	// batch being written, and the items whose bytes flush left in the cork
	// for the writer goroutine it handed over to.
	enc      entryEncoder
	inflight []qitem

	mu      sync.Mutex
	slots   map[string]*slotPort
	pending map[string]chan string // confirm id → decision
	// netAsks are the net questions being asked, by app key and origin:
	// requests that wait on the same one share it (ConfirmNet).
	netAsks map[string]*netAsk
	// netSession holds "until the page closes" answers, by app key and
	// origin: they end with this connection.
	netSession map[string]bool
	// hidden is the page's last reported visibility ({"t":"visibility"}); a
	// page that never reported one counts as visible.
	hidden bool
	// locale is the page's navigator.language ({"t":"locale"}), carried by
	// the host-ready of the instances it mounts; "" for the host's own.
	locale string
	// making is set while a make of this page runs (startMake).
	making bool

	// ctx ends when the connection does: a make of the page stops.
	ctx    context.Context
	cancel context.CancelFunc
}

func newConn(rl *Relay, user string, ws *websocket.Conn, cc *corkConn, pr *pageReader) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &conn{
		ctx:     ctx,
		cancel:  cancel,
		rl:      rl,
		user:    user,
		ws:      ws,
		cc:      cc,
		pr:      pr,
		inline:  !rl.writerOnly,
		q:       newQueue(rl.opts.MaxQueueBytes, rl.opts.MaxSlotQueueBytes),
		slots:   make(map[string]*slotPort),
		pending: make(map[string]chan string),
	}
	c.q.start = func() {
		c.writers.Add(1)
		go c.write()
	}
	return c
}

// inMsg is one page → host message.
type inMsg struct {
	T        string            `json:"t"`
	Slot     string            `json:"slot"`
	App      string            `json:"app"`
	Frame    json.RawMessage   `json:"frame"`
	ID       string            `json:"id"`
	Decision string            `json:"decision"`
	Mode     string            `json:"mode"`
	Tokens   map[string]string `json:"tokens"`
	Locale   string            `json:"locale"`
	Visible  *bool             `json:"visible"`
	Prompt   string            `json:"prompt"`
}

// serve runs the read loop (a writer runs on a goroutine of its own while
// there is something to write), and returns when the connection ended and
// its last writer with it, every session of the connection closed.
func (c *conn) serve() {
	ctx := c.rl.ctx
	for {
		c.pr.wait()
		bp := readBufs.Get().(*[]byte)
		typ, data, err := readMsg(c.ws, (*bp)[:0])
		if err != nil {
			break
		}
		if typ != websocket.MessageText {
			c.ws.Close(websocket.StatusUnsupportedData, "relay: text messages only")
			break
		}
		// Nothing keeps data past handle: the broker parses a copy
		// (frame.Parse), and every other message is decoded into values of
		// their own.
		c.handle(ctx, data)
		if cap(data) <= readBufMax {
			*bp = data[:0]
			readBufs.Put(bp)
		}
	}
	c.cancel()
	c.mu.Lock()
	slots := c.slots
	c.slots = map[string]*slotPort{}
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	for _, p := range slots {
		p.sess.Close()
	}
	c.q.close()
	c.writers.Wait()
	c.ws.CloseNow()
}

// readBufs holds the buffers read loops read messages into: an idle
// connection keeps none. One grown past readBufMax (a large import) is not
// kept.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const readBufMax = 64 << 10

// readMsg is the library's Read (Reader, then the whole message) appending
// to b, a buffer the caller reuses: the library's own Read allocates a new
// buffer for every message.
func readMsg(ws *websocket.Conn, b []byte) (websocket.MessageType, []byte, error) {
	// No context on the read: one would cost a context.AfterFunc per
	// message; Close ends a connection by closing it instead.
	typ, r, err := ws.Reader(context.Background())
	if err != nil {
		return 0, nil, err
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return typ, b, nil
		}
		if err != nil {
			return 0, nil, err
		}
	}
}

// write sends queued messages in order until nothing waits; once the queue
// is closed and drained it closes the socket. It also closes the sessions of
// the slots the queue ended.
func (c *conn) write() {
	defer c.writers.Done()
	if c.inflight != nil {
		// A claimant (flush) left bytes the socket did not take at once.
		items := c.inflight
		c.inflight = nil
		if err := c.cc.uncork(); err != nil {
			c.q.stop()
			c.ws.CloseNow()
			return
		}
		c.q.written(items)
	}
	for {
		items, ended, done, final := c.q.next()
		if done {
			if final {
				c.pr.closing(func() { c.ws.Close(websocket.StatusGoingAway, "host closing") })
			}
			return
		}
		for _, slot := range ended {
			c.endSlot(slot)
		}
		// One write for the whole batch (see corkConn), which also bounds
		// it by writeTimeout: the connection's write deadline, set once per
		// batch instead of a context (and its timer) per message.
		err := c.corkItems(items)
		if uerr := c.cc.uncork(); err == nil {
			err = uerr
		}
		if err != nil {
			c.q.stop()
			c.ws.CloseNow() // ends the read loop too
			return
		}
		c.q.written(items)
	}
}

// corkItems corks the connection and writes items into it, in order, for
// the writer (a writer goroutine or flush's claimant), which then uncorks; it stops at the first failed write. The
// encoder's buffer, reused from one item to the next (the library has
// copied each into the cork before the next is encoded), goes back at the
// end.
func (c *conn) corkItems(items []qitem) error {
	c.cc.cork()
	defer c.enc.release()
	for i := range items {
		msg := c.enc.message(&items[i])
		if err := c.ws.Write(context.Background(), websocket.MessageText, msg); err != nil {
			return err
		}
	}
	return nil
}

// flush writes what waits on the calling goroutine (a session's, with an
// answer just queued) when no writer runs, instead of starting a writer
// goroutine for it (on two cores, waking a thread for it costs more than
// the rest of a kvGet's round trip): the batch goes into the cork and out
// in one write that does not wait (corkConn.tryUncork), so the caller is
// never held by a page that does not read. What the socket does not take by then, what is pushed meanwhile,
// and anything else (ended slots, a closing queue, a batch past the cork)
// is left to a writer goroutine, started as signal would: one writer at a
// time, in order, with the same deadline, coalescing and budgets. Both
// routes put the library's bytes on the wire in the same order
// (TestFlushRoutesWriteTheSameBytes).
func (c *conn) flush() {
	if !c.inline || c.cc.now == nil {
		c.q.signal()
		return
	}
	items, ok := c.q.claim()
	if !ok {
		return
	}
	err := c.corkItems(items)
	rest := false
	if err == nil {
		rest, err = c.cc.tryUncork()
	}
	if err != nil {
		// As the writer's failed write: no writer runs again (running stays
		// set), and the connection ends.
		c.cc.discard()
		c.q.stop()
		c.ws.CloseNow() // ends the read loop too
		return
	}
	if rest {
		c.inflight = items // the writer started by release finishes them
	} else {
		c.q.written(items)
	}
	c.q.release(rest)
}

// handle acts on one message from the page: a frame (read without a full
// decode on the fast path) or a relay message, a step each.
func (c *conn) handle(ctx context.Context, data []byte) {
	if c.rl.isClosed() {
		return // closing: nothing new is accepted, only queued answers go out
	}
	if slot, fr, ok := frameMsg(data); ok {
		c.frame(ctx, slot, fr)
		return
	}
	var m inMsg
	if err := json.Unmarshal(data, &m); err != nil {
		return // not a relay message; the page never sends one
	}
	switch m.T {
	case "mount":
		c.mount(m.Slot, m.App)
	case "load":
		c.load(m.Slot)
	case "frame":
		c.frame(ctx, []byte(m.Slot), m.Frame)
	case "click":
		c.clicked(m.Slot, m.ID)
	case "unmount":
		c.unmount(m.Slot)
	case "confirm-answer":
		c.confirmAnswer(m.ID, m.Decision)
	case "reset":
		c.reset(m.Slot)
	case "theme":
		// The page's theme: its mode and the token set it computed
		// (frame.ThemeTokens, from its own stylesheet). A name outside the
		// set or a value that is no plain CSS value is dropped; an unknown
		// mode changes nothing.
		_ = c.rl.b.UpdateTheme(frame.Theme{Mode: m.Mode, Tokens: themeTokens(m.Tokens)})
	case "locale":
		// The user's locale as the page's browser reports it
		// (navigator.language): the host-ready of every instance this
		// connection mounts from now on carries it. A tag that is no
		// BCP 47 tag is ignored.
		if broker.CheckLocale(m.Locale) == nil {
			c.mu.Lock()
			c.locale = m.Locale
			c.mu.Unlock()
		}
	case "make-info":
		c.makeInfo()
	case "make", "make-restore":
		c.startMake(m, m.T == "make-restore")
	case "visibility":
		if m.Visible != nil {
			c.visibility(*m.Visible)
		}
	}
}

// load marks the slot's frame loaded, and on its first load tells it
// whether the page is hidden.
func (c *conn) load(slot string) {
	if p := c.slot(slot); p != nil {
		first := !p.loaded
		p.loaded = true
		p.sess.Load()
		if first {
			c.tellHidden(p)
		}
	}
}

// unmount ends the slot's session.
func (c *conn) unmount(slot string) {
	c.mu.Lock()
	p := c.slots[slot]
	delete(c.slots, slot)
	c.mu.Unlock()
	if p != nil {
		p.sess.Close()
	}
}

// confirmAnswer hands the user's decision to the confirm waiting on id.
func (c *conn) confirmAnswer(id, decision string) {
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- decision // buffered
	}
}

// reset is the user's explicit reset of the slot's parse-failure budget;
// its outcome is an inspect entry (RESET_FAILED when it failed).
func (c *conn) reset(slot string) {
	if !validSlot(slot) {
		return
	}
	err := errNoSlot
	if p := c.slot(slot); p != nil {
		err = p.sess.ResetAgent()
	}
	verdict, code, msg := "accept", "", "parse-failure budget reset"
	if err != nil {
		verdict, code, msg = "reject", frame.CodeResetFailed, err.Error()
	}
	c.inspect(inspectEntry{Time: c.rl.opts.Now(), Dir: "in", Slot: slot, Type: "reset", Verdict: verdict, Code: code, Message: msg})
}

// visibility tells the loaded apps that the runner page was hidden or
// shown. A slot not loaded yet has had no host-ready; it learns the
// page's state right after it (tellHidden).
func (c *conn) visibility(visible bool) {
	ev, err := events.Visibility(visible)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.hidden = !visible
	ps := make([]*slotPort, 0, len(c.slots))
	for _, p := range c.slots {
		if p.loaded {
			ps = append(ps, p)
		}
	}
	c.mu.Unlock()
	for _, p := range ps {
		p.sess.Event(ev)
	}
}

// frame hands fr, a frame message's frame for the slot named slot, to that
// slot's session. The slot is looked up by its bytes (no string is made for
// it: the slot's own name is used from then on).
func (c *conn) frame(ctx context.Context, slot []byte, fr []byte) {
	c.mu.Lock()
	p := c.slots[string(slot)]
	c.mu.Unlock()
	if p == nil {
		if s := string(slot); validSlot(s) {
			c.inspect(inspectEntry{Time: c.rl.opts.Now(), Dir: "in", Slot: s, Verdict: "ignore", Message: "no app is mounted in this slot"})
		}
		return
	}
	var at time.Time // the row's time, read only when there is a row
	inspecting := !c.rl.opts.NoInspect
	if inspecting {
		at = c.rl.opts.Now()
		c.q.hold() // the frame's row goes before what the broker answers
	}
	v := p.sess.Receive(ctx, fr)
	if inspecting {
		c.received(inspectEntry{Time: at, Dir: "in", Slot: p.slot, Type: v.Type, RequestID: v.RequestID, Verdict: v.Verdict, Code: v.Code, Message: v.Message}, v.Verdict == "accept" && v.RequestID != "")
	}
	if v.Verdict == "accept" && v.Type == frame.TypeAppAnnounce {
		c.announced(p)
	}
}

// framePrefix and frameKey are how the runner page writes a frame message:
// {"t":"frame","slot":"<slot>","frame":<the frame>} (JSON.stringify of an
// object built in that order).
const (
	framePrefix = `{"t":"frame","slot":"`
	frameKey    = `","frame":`
)

// frameMsg reads a frame message written the way the runner page writes it,
// without decoding it: the slot is a valid slot name (no escapes possible)
// and the frame is the rest of the message but its closing brace, handed to
// the broker as it is (frame.Parse judges it; it is JSON.stringify's output
// of the app's frame, so nothing follows it). Any other message, or a slot
// that is not a valid name, is left to encoding/json (ok false).
func frameMsg(data []byte) (slot []byte, fr []byte, ok bool) {
	rest, found := bytes.CutPrefix(data, []byte(framePrefix))
	if !found {
		return nil, nil, false
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 || !validSlot(string(rest[:i])) {
		return nil, nil, false
	}
	body, found := bytes.CutPrefix(rest[i:], []byte(frameKey))
	if !found || len(body) < 3 || body[0] != '{' || body[len(body)-2] != '}' || body[len(body)-1] != '}' {
		return nil, nil, false
	}
	return rest[:i], body[:len(body)-1], true
}

// announced tells the page what the app in p's slot accepted announce says
// about itself: {"t":"announce","slot":…,"appId":…,"displayName":…,
// "description"?,"iconEmoji"?,"iconColor"?}. It is that instance's claim,
// shown as such on its own header; the app list keeps the installed app's
// own metadata.
func (c *conn) announced(p *slotPort) {
	a := p.sess.Announced()
	if a == nil {
		return
	}
	// An icon colour is a colour: anything else (var(), a gradient, url())
	// the page never gets.
	color := a.IconColor
	if color != nil && !csscolor.Valid(*color) {
		color = nil
	}
	raw, err := json.Marshal(struct {
		T           string  `json:"t"`
		Slot        string  `json:"slot"`
		AppID       string  `json:"appId"`
		DisplayName string  `json:"displayName"`
		Description *string `json:"description,omitempty"`
		IconEmoji   *string `json:"iconEmoji,omitempty"`
		IconColor   *string `json:"iconColor,omitempty"`
	}{"announce", p.slot, a.AppID, a.DisplayName, a.Description, a.IconEmoji, color})
	if err != nil {
		return
	}
	c.q.pushSlot(p.slot, coalesceKey{}, raw)
}

// tellHidden follows p's host-ready (its first load) with a visibility
// host-event {visible:false} when the page last reported itself hidden: an
// instance mounted while the page is hidden, or remounted after a reconnect
// on a page that reported it, is otherwise never told. A page that never
// reported, or reported visible, gets nothing: visible is the default.
func (c *conn) tellHidden(p *slotPort) {
	c.mu.Lock()
	hidden := c.hidden
	c.mu.Unlock()
	if !hidden {
		return
	}
	if ev, err := events.Visibility(false); err == nil {
		p.sess.Event(ev)
	}
}

// endSlot closes the session of a slot the queue ended (it fell too far
// behind): its requests end, it is sent nothing more, and the page was told
// with {"t":"ended"}.
func (c *conn) endSlot(slot string) {
	c.mu.Lock()
	p := c.slots[slot]
	delete(c.slots, slot)
	c.mu.Unlock()
	if p != nil && p.sess != nil {
		p.sess.Close()
	}
}

// errNoSlot is the failure of a reset for a slot with no app mounted.
var errNoSlot = errors.New("relay: reset: no app is mounted in this slot")

func (c *conn) slot(id string) *slotPort {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slots[id]
}

func (c *conn) mount(slot, app string) {
	if !validSlot(slot) || app == "" {
		return
	}
	if in := c.rl.opts.Installed; in != nil && !in(app) {
		return
	}
	c.mu.Lock()
	if _, taken := c.slots[slot]; taken {
		c.mu.Unlock()
		return // a slot names one iframe for the connection's life
	}
	p := &slotPort{c: c, slot: slot}
	c.slots[slot] = p
	c.mu.Unlock()
	c.q.revive(slot)
	sess, err := c.rl.b.OpenUser(c.user, app, p)
	if err != nil {
		c.mu.Lock()
		delete(c.slots, slot)
		c.mu.Unlock()
		return
	}
	c.mu.Lock()
	locale := c.locale
	c.mu.Unlock()
	if locale != "" {
		_ = sess.SetLocale(locale) // checked when it came
	}
	p.sess = sess
}

// inspectEntry is a row of the page inspector (docs/architecture.md).
type inspectEntry struct {
	Time      time.Time `json:"time"`
	Dir       string    `json:"dir"` // "in" (from the app) or "out"
	Slot      string    `json:"slot"`
	Type      string    `json:"type,omitempty"` // the frame's type, "reset", or none
	RequestID string    `json:"requestId,omitempty"`
	Verdict   string    `json:"verdict"` // accept, reject or ignore
	Code      string    `json:"code,omitempty"`
	Message   string    `json:"message,omitempty"`
}

// inspect queues the page inspector's row e: {"t":"inspect","entry":e}.
func (c *conn) inspect(e inspectEntry) { c.inspectKeyed(coalesceKey{}, e, true) }

// inspectKeyed is inspect for an entry a newer one with the same key may
// replace while both wait in the queue (a streaming frame's).
// With kick false the caller starts the writer (flush).
func (c *conn) inspectKeyed(key coalesceKey, e inspectEntry, kick bool) {
	if c.rl.opts.NoInspect {
		return
	}
	c.q.pushEntry(key, e, kick)
}

// received queues the row of a frame the read loop handed to the broker
// (under the queue's hold since, so that it goes before the frame's answer)
// and sees it written. The row of an accepted request whose answer has not
// come yet waits for that answer, to go out with it in one write (a
// kvGet's comes within microseconds; a row of its own costs a write and the
// page a read): the sweep writes it alone if the answer takes longer than
// a sweep period (Relay.sweep). Any other row, or one with something else
// waiting, is written now, by this goroutine when no writer runs.
func (c *conn) received(e inspectEntry, answer bool) {
	flush, list := c.q.unhold(e, answer, c.rl.sw.gen.Load()+1)
	if list {
		c.rl.later(c)
	}
	if flush {
		c.flush()
	}
}

// inspectMsg is the page's message for an inspector row.
type inspectMsg struct {
	T     string       `json:"t"`
	Entry inspectEntry `json:"entry"`
}

// entryEncoder writes inspector rows and frame messages into a buffer it
// reuses: a writer encodes the items it takes one at a time, each written
// before the next is encoded. The buffer comes from msgBufs and goes back
// there with release, at the end of a drain: an idle connection keeps none.
type entryEncoder struct {
	bp *[]byte
}

// msgBufs holds the encoders' buffers; one past msgBufMax is not kept.
var msgBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const msgBufMax = 64 << 10

// message is it's message: its bytes, or its entry's row or its frame
// message encoded into e's buffer (valid until the next call).
func (e *entryEncoder) message(it *qitem) []byte {
	if it.ent == nil && !it.framed {
		return it.msg
	}
	if e.bp == nil {
		e.bp = msgBufs.Get().(*[]byte)
	}
	b := (*e.bp)[:0]
	if it.ent != nil {
		b = appendRow(b, it.ent)
	} else {
		b = appendFrameMessage(b, it.slot, it.msg)
	}
	*e.bp = b
	return b
}

// release gives e's buffer back (the drain's messages are written).
func (e *entryEncoder) release() {
	if e.bp == nil {
		return
	}
	if cap(*e.bp) <= msgBufMax {
		*e.bp = (*e.bp)[:0]
		msgBufs.Put(e.bp)
	}
	e.bp = nil
}

// appendFrameMessage appends {"t":"frame","slot":…,"frame":raw}, spliced
// rather than encoded: raw is the broker's JSON of the frame, which
// encoding/json would copy and scan again (up to a MiB, for every frame),
// and the slot is a validSlot name, JSON as it is.
func appendFrameMessage(b []byte, slot string, raw []byte) []byte {
	b = append(b, framePrefix...)
	b = append(b, slot...)
	b = append(b, frameKey...)
	b = append(b, raw...)
	return append(b, '}')
}

// frameMessageLen is the length of appendFrameMessage's message.
func frameMessageLen(slot string, raw []byte) int {
	return len(framePrefix) + len(slot) + len(frameKey) + len(raw) + 1
}

// appendRow appends ent's row, {"t":"inspect","entry":{…}}: the bytes
// json.Marshal writes for inspectMsg{"inspect", *ent} with its time in UTC
// (TestRowIsJSONMarshal, FuzzRowIsJSONMarshal), without reflection. A time
// encoding/json refuses (a year outside 0–9999; the relay's times come
// from Options.Now) panics with its error, as encoding/json's path did.
func appendRow(b []byte, ent *inspectEntry) []byte {
	t := ent.Time.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		_, err := t.MarshalJSON()
		panic(fmt.Sprintf("relay: encode an inspector row: %v", err))
	}
	b = append(b, `{"t":"inspect","entry":{"time":"`...)
	b = t.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","dir":`...)
	b = frame.AppendString(b, ent.Dir)
	b = append(b, `,"slot":`...)
	b = frame.AppendString(b, ent.Slot)
	if ent.Type != "" {
		b = append(b, `,"type":`...)
		b = frame.AppendString(b, ent.Type)
	}
	if ent.RequestID != "" {
		b = append(b, `,"requestId":`...)
		b = frame.AppendString(b, ent.RequestID)
	}
	b = append(b, `,"verdict":`...)
	b = frame.AppendString(b, ent.Verdict)
	if ent.Code != "" {
		b = append(b, `,"code":`...)
		b = frame.AppendString(b, ent.Code)
	}
	if ent.Message != "" {
		b = append(b, `,"message":`...)
		b = frame.AppendString(b, ent.Message)
	}
	return append(b, "}}"...)
}

// entrySize bounds the length of e's row as the queue counts it before it
// is encoded: the row's fixed part, the longest time, and each string's
// bytes at six each unless printable ASCII that encoding/json writes as is.
func entrySize(e *inspectEntry) int64 {
	n := entryOverhead()
	for _, s := range [...]string{e.Dir, e.Slot, e.Type, e.RequestID, e.Verdict, e.Code, e.Message} {
		for i := 0; i < len(s); i++ {
			if b := s[i]; b < 0x20 || b >= 0x7f || b == '"' || b == '\\' || b == '<' || b == '>' || b == '&' {
				n += 6
			} else {
				n++
			}
		}
	}
	return n
}

// entryOverhead is the length of a row but its strings' contents, with the
// longest time RFC 3339 with nanoseconds gives (encoding/json's form).
var entryOverhead = sync.OnceValue(func() int64 {
	e := inspectEntry{Dir: "x", Slot: "x", Type: "x", RequestID: "x", Verdict: "x", Code: "x", Message: "x"}
	row, _ := json.Marshal(inspectMsg{"inspect", e})
	zero, _ := json.Marshal(time.Time{})
	longest := len(`"2006-01-02T15:04:05.999999999Z"`)
	return int64(len(row) - 7 - len(zero) + longest)
})

// message is a relay message to the page, encoded by encoding/json. Its
// values are strings, times and structs of them, which always encode.
func message(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("relay: encode %T: %v", v, err))
	}
	return b
}

// slotPort is the broker's Port for one slot of one connection.
type slotPort struct {
	c    *conn
	slot string
	sess *broker.Session // set right after Open, before any frame can arrive
	// loaded is set on the slot's first load (its host-ready). Only the
	// connection's read loop touches it.
	loaded bool
	// clicks are the requestIds the page marked as raised by the user's
	// click, not yet handled (c.mu).
	clicks []string
}

// Send queues {"t":"frame","slot":…,"frame":raw} (appendFrameMessage,
// written from raw when the writer takes it: raw is the broker's and never
// changes), then its inspect entry. A streaming app-response (cumulative
// text) replaces the same request's streaming frame still waiting in the
// queue, and its entry that one's entry (see queue).
func (p *slotPort) Send(f frame.Frame, raw []byte) {
	rid := frame.RequestIDOf(f)
	var key coalesceKey
	if r, ok := f.(*frame.AppResponse); ok && r.OK && r.Streaming != nil && *r.Streaming {
		key.rid = rid
	}
	if !p.c.q.pushFrame(p.slot, key, raw) {
		return // the slot was ended, or the connection is closing
	}
	if p.c.rl.opts.NoInspect {
		p.c.flush() // no row: nothing of the entry is made, not even its clock reading
		return
	}
	code := ""
	if e := frame.ErrorOf(f); e != nil {
		code = e.Code
	}
	key.inspect = true
	p.c.inspectKeyed(key, inspectEntry{Time: p.c.rl.opts.Now(), Dir: "out", Slot: p.slot, Type: f.FrameType(), RequestID: rid, Verdict: "accept", Code: code}, false)
	p.c.flush() // the frame and its row in one write, by this goroutine when it can
}

// validSlot admits the page's short slot names ([A-Za-z0-9_.-], 1–64), which
// also makes them safe to write into JSON verbatim.
func validSlot(s string) bool {
	if s == "" || len(s) > maxSlotLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '.' || b == '-') {
			return false
		}
	}
	return true
}
