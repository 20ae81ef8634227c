package broker_test

// The floors the relay benchmarks are measured against (bench/all prints the
// ratios): a bare coder/websocket echo carrying the same message sizes as a
// kvGet round trip, and the memory of an idle page connection.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/relay"
)

// kvGetSizes are the sizes of one kvGet round trip on the relay with the
// inspector off: the page's message and the host's answer.
func kvGetSizes(b *testing.B) (req, resp int) {
	st := openStore(b)
	if err := st.KVSet(context.Background(), "bench", "prefs", []byte(`{"theme":"dark","size":14,"recent":["a","b","c"]}`)); err != nil {
		b.Fatal(err)
	}
	h := newHost(b, broker.Options{DB: broker.Store(st)}, relay.Options{NoInspect: true})
	bp := dialBench(b, h)
	inst, ch := bp.open(b, "s0", "bench")
	msg := []byte(`{"t":"frame","slot":"s0","frame":{"v":1,"type":"snug:db-request","requestId":"k0","instanceId":"` + inst + `","op":"kvGet","key":"prefs"}}`)
	bp.send(b, msg)
	for {
		if m := <-ch; terminalOf(m, "k0") {
			return len(msg), len(m)
		}
	}
}

// BenchmarkEcho is the floor of BenchmarkKVGet/relay-*-noinspect: a bare
// coder/websocket server that answers each message with one of the kvGet
// answer's size, and clients sending messages of the kvGet request's size,
// one at a time each, over loopback in this process.
func BenchmarkEcho(b *testing.B) {
	reqN, respN := kvGetSizes(b)
	resp := bytes.Repeat([]byte("x"), respN)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for {
			_, _, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			if err := ws.Write(context.Background(), websocket.MessageText, resp); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	req := bytes.Repeat([]byte("x"), reqN)
	for _, clients := range []int{1, 16} {
		b.Run("ws-"+strconv.Itoa(clients), func(b *testing.B) {
			wss := make([]*websocket.Conn, clients)
			for i := range wss {
				ws, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
				if err != nil {
					b.Fatal(err)
				}
				defer ws.CloseNow()
				wss[i] = ws
			}
			spread(b, clients, "msg/s", func(i, n int) {
				for j := 0; j < n; j++ {
					if err := wss[i].Write(context.Background(), websocket.MessageText, req); err != nil {
						b.Error(err)
						return
					}
					if _, _, err := wss[i].Read(context.Background()); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// rawPage is a page connection held by a minimal WebSocket client that has
// no goroutine and no buffer of its own, so that what an idle connection
// costs the host is what the process's heap and stacks grow by.
type rawPage struct{ c net.Conn }

// frameText writes one masked text frame (mask key zero: the payload as is).
func frameText(p []byte) []byte {
	out := []byte{0x81}
	switch n := len(p); {
	case n < 126:
		out = append(out, 0x80|byte(n))
	default:
		out = append(out, 0x80|126, byte(n>>8), byte(n))
	}
	out = append(out, 0, 0, 0, 0)
	return append(out, p...)
}

func dialRaw(b *testing.B, h *host, slot string) rawPage {
	c, err := net.Dial("tcp", h.addr)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", h.addr, h.origin)
	br := bufio.NewReaderSize(c, 16)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		b.Fatal("handshake", err, resp)
	}
	c.Write(frameText([]byte(`{"t":"mount","slot":"` + slot + `","app":"bench"}`)))
	c.Write(frameText([]byte(`{"t":"load","slot":"` + slot + `"}`)))
	// Wait for host-ready, byte by byte: no buffer is kept.
	want := []byte(`"snug:host-ready"`)
	var seen []byte
	one := make([]byte, 1)
	for !bytes.Contains(seen, want) {
		if _, err := br.Read(one); err != nil {
			b.Fatal("waiting for host-ready:", err)
		}
		seen = append(seen, one[0])
		if len(seen) > 4096 {
			seen = seen[len(seen)-64:]
		}
	}
	return rawPage{c}
}

// memNow reads the heap and the stacks in use after four collections: a
// collection shrinks a parked goroutine's stack by half when it uses less
// than a quarter of it, so an idle connection's stacks reach the size they
// keep over a long idle life.
func memNow() (heap, stack uint64) {
	for range 4 {
		runtime.GC()
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.StackInuse
}

// settle waits (a little) for the goroutine count to fall to want: a writer
// that just wrote ends right after.
func settle(want int) {
	for i := 0; i < 200 && runtime.NumGoroutine() > want && want > 0; i++ {
		time.Sleep(time.Millisecond)
	}
}

// BenchmarkIdleConn measures the memory one idle page connection holds in
// the host (relay, broker session, WebSocket and net/http state): 200 pages
// each with one app mounted and loaded (host-ready received), then idle.
// Heap is HeapAlloc after two GCs, stack StackInuse; both per connection.
// The client side is a goroutine-less raw socket (its few hundred bytes of
// net.Conn are counted too, so the figure is an upper bound).
func BenchmarkIdleConn(b *testing.B) {
	const pages = 200
	for b.Loop() {
		h := newHost(b, broker.Options{}, relay.Options{})
		// One page first: everything a first connection allocates once
		// (pools, the broker's first session) is not per connection.
		warm := dialRaw(b, h, "w")
		settle(0)
		g0 := runtime.NumGoroutine()
		heap0, stack0 := memNow()
		ps := make([]rawPage, pages)
		for i := range ps {
			ps[i] = dialRaw(b, h, "s"+strconv.Itoa(i))
		}
		// The writers that sent the host-readys are ending.
		settle(g0 + pages)
		heap1, stack1 := memNow()
		heap := float64(int64(heap1-heap0)) / pages
		stack := float64(int64(stack1-stack0)) / pages
		b.ReportMetric(heap, "heap-B/conn")
		b.ReportMetric(stack, "stack-B/conn")
		b.ReportMetric(heap+stack, "B/conn")
		for _, p := range ps {
			p.c.Close()
		}
		warm.c.Close()
		runtime.KeepAlive(ps)
	}
}

// BenchmarkEchoBroker is the floor of BenchmarkKVGet/relay-*-noinspect
// measured in place: BenchmarkEcho's server (coder/websocket's Read and
// Write and nothing else of the relay: no idle wait, queue, cork or write
// that does not wait) with the broker's work between them. The page's frame
// message is cut to its frame and handed to a broker session (Receive,
// as the relay hands it), and the answer (a kvGet answered on the read
// loop) goes back in the relay's frame message; the clients are the relay
// benchmark's. What relay-N-noinspect costs over ws-N here is the relay's
// own work; what ws-N here costs over BenchmarkEcho/ws-N is the broker's,
// as it runs between a socket's read and write.
func BenchmarkEchoBroker(b *testing.B) {
	st := openStore(b)
	ctx := context.Background()
	if err := st.KVSet(ctx, "bench", "prefs", []byte(`{"theme":"dark","size":14,"recent":["a","b","c"]}`)); err != nil {
		b.Fatal(err)
	}
	br := broker.New(broker.Options{DB: broker.Store(st)})
	defer br.Shutdown(ctx)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		port := chanPort(make(chan []byte, 1))
		s, err := br.Open("bench", port)
		if err != nil {
			return
		}
		defer s.Close()
		head := `{"t":"frame","slot":"` + r.URL.Query().Get("slot") + `","frame":`
		var out []byte
		send := func(raw []byte) error {
			out = append(append(append(out[:0], head...), raw...), '}')
			return ws.Write(ctx, websocket.MessageText, out)
		}
		s.Load()
		if send(<-port) != nil {
			return
		}
		key := []byte(`,"frame":`)
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			i := bytes.Index(data, key)
			if i < 0 {
				return
			}
			s.Receive(ctx, data[i+len(key):len(data)-1])
			if send(<-port) != nil {
				return
			}
		}
	}))
	defer srv.Close()
	for _, clients := range []int{1, 16} {
		b.Run("ws-"+strconv.Itoa(clients), func(b *testing.B) {
			wss := make([]*websocket.Conn, clients)
			insts := make([]string, clients)
			for i := range wss {
				ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"?slot=s"+strconv.Itoa(i), nil)
				if err != nil {
					b.Fatal(err)
				}
				defer ws.CloseNow()
				ws.SetReadLimit(-1)
				_, hr, err := ws.Read(ctx)
				j := bytes.Index(hr, []byte(`"instanceId":"`))
				if err != nil || j < 0 {
					b.Fatal("host-ready", err)
				}
				rest := hr[j+len(`"instanceId":"`):]
				wss[i], insts[i] = ws, string(rest[:bytes.IndexByte(rest, '"')])
			}
			// As BenchmarkKVGet/relay-N's pages, reading their socket
			// through the library.
			kvGetPages(b, insts, func(i int, msg, want []byte) error {
				if err := wss[i].Write(ctx, websocket.MessageText, msg); err != nil {
					return err
				}
				for {
					_, data, err := wss[i].Read(ctx)
					if err != nil {
						return err
					}
					if terminalMsg(data, want) {
						return nil
					}
				}
			})
		})
	}
}
