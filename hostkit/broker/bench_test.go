package broker_test

// Benchmarks of the broker's round trips, each against a baseline in the
// same run (bench/broker.sh prints the ratios):
//
//	BenchmarkKVGet/direct         store.KVGet on the same SQLite file
//	BenchmarkKVGet/parse          frame.Parse of the kvGet request
//	BenchmarkKVGet/answer         frame.Marshal of its answer and the parse-back that checks it
//	BenchmarkKVGet/encode         frame.Encode of its answer (generated, sure without a parse-back)
//	BenchmarkKVGet/broker-only    Session.Receive → store → terminal, in process (no WebSocket)
//	BenchmarkKVGet/broker-only-metrics  the same with Options.Metrics (hostkit/metrics) counting
//	BenchmarkKVGet/relay-1        one page: WebSocket → relay → broker → store → back
//	BenchmarkKVGet/relay-16       16 pages at once (kvGet/s)
//	BenchmarkEchoBroker/ws-1      the echo with the broker between its read and write (the floor in place)
//	BenchmarkAppMessage/mock-100  100 instances asking the offline mock agent at once (p50/p99)
//
// The relay variants run with the inspector on (the runner's default: one
// inspect entry per frame each way) and off.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/metrics"
	"github.com/snuggen/snuggen/hostkit/relay"
)

// benchPage is a lean relay client: one slot per instance, frames matched by
// bytes, no log.
type benchPage struct {
	ws *websocket.Conn
	mu sync.Mutex
	// waiting: slot → channel receiving each frame message for that slot
	waiting map[string]chan []byte
	done    chan struct{}
}

func dialBench(b testing.TB, h *host) *benchPage {
	bp := dialDirect(b, h)
	bp.waiting, bp.done = map[string]chan []byte{}, make(chan struct{})
	ws := bp.ws
	go func() {
		defer close(bp.done)
		for {
			_, data, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			if !bytes.HasPrefix(data, []byte(`{"t":"frame","slot":"`)) {
				continue // inspect entries
			}
			rest := data[len(`{"t":"frame","slot":"`):]
			bp.mu.Lock()
			ch := bp.waiting[string(rest[:bytes.IndexByte(rest, '"')])]
			bp.mu.Unlock()
			if ch != nil {
				ch <- data
			}
		}
	}()
	b.Cleanup(func() { ws.CloseNow(); <-bp.done })
	return bp
}

// dialDirect is a benchPage without a reader goroutine: its one user reads
// the socket itself (openDirect, await), the way BenchmarkEcho's clients
// do, so that a round trip costs the client what the echo's costs it.
func dialDirect(b testing.TB, h *host) *benchPage {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+h.addr+"/ws", &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {h.origin}}})
	if err != nil {
		b.Fatal(err)
	}
	ws.SetReadLimit(-1)
	b.Cleanup(func() { ws.CloseNow() })
	return &benchPage{ws: ws}
}

// openDirect mounts and loads slot on a dialDirect page and returns the
// instanceId its host-ready carries.
func (bp *benchPage) openDirect(b testing.TB, slot, app string) string {
	bp.send(b, []byte(`{"t":"mount","slot":"`+slot+`","app":"`+app+`"}`))
	bp.send(b, []byte(`{"t":"load","slot":"`+slot+`"}`))
	for {
		hr := bp.read(b)
		if i := bytes.Index(hr, []byte(`"instanceId":"`)); i >= 0 && bytes.Contains(hr, []byte(`"snug:host-ready"`)) {
			rest := hr[i+len(`"instanceId":"`):]
			return string(rest[:bytes.IndexByte(rest, '"')])
		}
	}
}

func (bp *benchPage) read(b testing.TB) []byte {
	_, data, err := bp.ws.Read(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func (bp *benchPage) send(b testing.TB, msg []byte) {
	if err := bp.ws.Write(context.Background(), websocket.MessageText, msg); err != nil {
		b.Fatal(err)
	}
}

// open mounts and loads slot and returns its instanceId and its frame channel.
func (bp *benchPage) open(b testing.TB, slot, app string) (string, chan []byte) {
	ch := make(chan []byte, 64)
	bp.mu.Lock()
	bp.waiting[slot] = ch
	bp.mu.Unlock()
	bp.send(b, []byte(`{"t":"mount","slot":"`+slot+`","app":"`+app+`"}`))
	bp.send(b, []byte(`{"t":"load","slot":"`+slot+`"}`))
	hr := <-ch
	i := bytes.Index(hr, []byte(`"instanceId":"`))
	rest := hr[i+len(`"instanceId":"`):]
	return string(rest[:bytes.IndexByte(rest, '"')]), ch
}

// terminalOf reports whether a message is the frame message with the
// terminal for rid. An inspector row names the request too: it is not the
// answer (a client that took the request's row for its answer would send
// its next request before the answer came).
func terminalOf(data []byte, rid string) bool {
	return terminalMsg(data, []byte(`"requestId":"`+rid+`"`))
}

// terminalMsg is terminalOf for the requestId member as it is written (want).
func terminalMsg(data, want []byte) bool {
	return bytes.HasPrefix(data, []byte(`{"t":"frame"`)) && bytes.Contains(data, want) && !bytes.Contains(data, []byte(`"streaming":true`))
}

// kvGetPages runs b.N kvGet round trips spread over one page per instance
// in insts (page i's slot is "s<i>"), each page sending its next request
// when the answer to its last one came, and reports kvGet/s and the CPU per
// round trip. The request and the requestId member its answer carries are
// written into buffers reused for every round trip, so that a page costs
// what the echo's client does but for the unique id and the look for it.
// roundTrip sends msg on page i and reads until the message terminalMsg
// finds want in.
func kvGetPages(b *testing.B, insts []string, roundTrip func(i int, msg, want []byte) error) {
	spread(b, len(insts), "kvGet/s", func(i, n int) {
		head := []byte(`{"t":"frame","slot":"s` + strconv.Itoa(i) + `","frame":{"v":1,"type":"snug:db-request","requestId":"k`)
		tail := `","instanceId":"` + insts[i] + `","op":"kvGet","key":"prefs"}}`
		var msg, want []byte
		for j := 0; j < n; j++ {
			msg = append(strconv.AppendInt(append(msg[:0], head...), int64(j), 10), tail...)
			want = append(strconv.AppendInt(append(want[:0], `"requestId":"k`...), int64(j), 10), '"')
			if err := roundTrip(i, msg, want); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// spread runs b.N round trips over clients goroutines, client i making n
// of them in a row (client 0 also the remainder), and reports their rate
// as unit and the CPU per round trip: the one loop the relay's pages, the
// echo's clients and the floor's share, so their figures compare.
func spread(b *testing.B, clients int, unit string, client func(i, n int)) {
	var wg sync.WaitGroup
	per := b.N / clients
	b.ResetTimer()
	defer cpuPerOp(b)()
	start := time.Now()
	for i := range clients {
		n := per
		if i == 0 {
			n += b.N % clients
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			client(i, n)
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), unit)
}

// cpuPerOp starts counting the process's CPU time; the func it returns
// reports it per op ("cpu-ns/op": both ends of the socket, since the page
// runs in the same process).
func cpuPerOp(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if d := cpuTime() - start; d > 0 {
			b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

// chanPort is an in-process broker.Port.
type chanPort chan []byte

func (p chanPort) Send(f frame.Frame, raw []byte) { p <- raw }

func BenchmarkKVGet(b *testing.B) {
	st := openStore(b)
	ctx := context.Background()
	if err := st.KVSet(ctx, "bench", "prefs", []byte(`{"theme":"dark","size":14,"recent":["a","b","c"]}`)); err != nil {
		b.Fatal(err)
	}
	b.Run("direct", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			if _, found, err := st.KVGet(ctx, "bench", "prefs"); err != nil || !found {
				b.Fatal(err, found)
			}
		}
	})
	// The broker's two passes over JSON, alone: reading the request
	// (frame.Parse) and making the answer
	// (frame.Marshal, then the parse-back Session.send checks it with).
	req := []byte(`{"v":1,"type":"snug:db-request","requestId":"k1","instanceId":"inst-0123456789abcdef","op":"kvGet","key":"prefs"}`)
	b.Run("parse", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			if f, err := frame.Parse(req); f == nil || err != nil {
				b.Fatal(f, err)
			}
		}
	})
	b.Run("answer", func(b *testing.B) {
		value, found, err := st.KVGet(ctx, "bench", "prefs")
		if err != nil || !found {
			b.Fatal(err, found)
		}
		defer cpuPerOp(b)()
		for b.Loop() {
			raw, err := frame.Marshal(&frame.DBResponse{RequestID: "k1", OK: true, Result: &frame.DBResult{Found: &found, Value: value}})
			if err != nil {
				b.Fatal(err)
			}
			if f, err := frame.Parse(raw); f == nil || err != nil {
				b.Fatal(f, err)
			}
		}
	})
	b.Run("encode", func(b *testing.B) {
		value, found, err := st.KVGet(ctx, "bench", "prefs")
		if err != nil || !found {
			b.Fatal(err, found)
		}
		defer cpuPerOp(b)()
		for b.Loop() {
			if raw, sure := frame.Encode(&frame.DBResponse{RequestID: "k1", OK: true, Result: &frame.DBResult{Found: &found, Value: value}}); !sure || raw == nil {
				b.Fatal("not sure")
			}
		}
	})
	// The broker alone: Receive → handler → terminal to an in-process port
	// (no WebSocket), to tell the broker's share from the transport's.
	// broker-only-metrics is broker-only with the host's metrics on
	// (hostkit/metrics: a counter per request): the hooks' cost.
	for _, name := range []string{"broker-only", "broker-only-metrics"} {
		b.Run(name, func(b *testing.B) {
			opts := broker.Options{DB: broker.Store(st)}
			if name == "broker-only-metrics" {
				opts.Metrics = metrics.New()
			}
			br := broker.New(opts)
			defer br.Shutdown(context.Background())
			port := chanPort(make(chan []byte, 1))
			s, err := br.Open("bench", port)
			if err != nil {
				b.Fatal(err)
			}
			s.Load()
			<-port
			inst := s.InstanceID()
			i := 0
			defer cpuPerOp(b)()
			for b.Loop() {
				i++
				s.Receive(ctx, []byte(`{"v":1,"type":"snug:db-request","requestId":"k`+strconv.Itoa(i)+`","instanceId":"`+inst+`","op":"kvGet","key":"prefs"}`))
				<-port
			}
		})
	}
	for _, inspect := range []bool{true, false} {
		suffix := ""
		if !inspect {
			suffix = "-noinspect"
		}
		for _, clients := range []int{1, 16} {
			b.Run(fmt.Sprintf("relay-%d%s", clients, suffix), func(b *testing.B) {
				h := newHost(b, broker.Options{DB: broker.Store(st)}, relay.Options{NoInspect: !inspect})
				pages := make([]*benchPage, clients)
				insts := make([]string, clients)
				for i := range pages {
					pages[i] = dialDirect(b, h)
					insts[i] = pages[i].openDirect(b, "s"+strconv.Itoa(i), "bench")
				}
				kvGetPages(b, insts, func(i int, msg, want []byte) error {
					pages[i].send(b, msg)
					for !terminalMsg(pages[i].read(b), want) {
					}
					return nil
				})
			})
		}
	}
}

// BenchmarkAppMessage runs 100 instances on one page (the runner's shape)
// asking the offline mock agent through the real bridge. "saturated": each
// instance asks again the moment its answer arrives (100 requests always in
// flight: latency is 100 / throughput). "paced": each instance asks every
// 100 ms (1,000 asks/s in all), the latency an app sees under steady load.
//
// mock-1000-paced: 1,000 instances each asking every second (1,000 asks/s).
func BenchmarkAppMessage(b *testing.B) {
	for _, c := range []struct {
		name      string
		instances int
		inspect   bool
		every     time.Duration
	}{
		{"saturated", 100, true, 0},
		{"saturated-noinspect", 100, false, 0},
		{"paced", 100, true, 100 * time.Millisecond},
		{"paced-noinspect", 100, false, 100 * time.Millisecond},
		{"paced", 1000, true, time.Second},
	} {
		instances := c.instances
		b.Run(fmt.Sprintf("mock-%d-%s", instances, c.name), func(b *testing.B) {
			h := newHost(b, broker.Options{Agent: mockAgent(0)}, relay.Options{NoInspect: !c.inspect})
			bp := dialBench(b, h)
			insts := make([]string, instances)
			chans := make([]chan []byte, instances)
			for i := range insts {
				insts[i], chans[i] = bp.open(b, "s"+strconv.Itoa(i), "bench")
			}
			var mu sync.Mutex
			lat := make([]time.Duration, 0, b.N)
			var wg sync.WaitGroup
			per := (b.N + instances - 1) / instances
			b.ResetTimer()
			defer cpuPerOp(b)()
			start := time.Now()
			for i := range insts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					slot := "s" + strconv.Itoa(i)
					mine := make([]time.Duration, 0, per)
					next := start.Add(c.every * time.Duration(i) / time.Duration(instances))
					for j := 0; j < per; j++ {
						if c.every > 0 {
							time.Sleep(time.Until(next))
							next = next.Add(c.every)
						}
						rid := "a" + strconv.Itoa(j)
						t0 := time.Now()
						bp.send(b, []byte(`{"t":"frame","slot":"`+slot+`","frame":{"v":1,"type":"snug:app-message","requestId":"`+rid+`","instanceId":"`+insts[i]+`","appId":"bench","action":"summarize","payload":{"text":"a short note to summarize"}}}`))
						for !terminalOf(<-chans[i], rid) {
						}
						mine = append(mine, time.Since(t0))
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			slices.Sort(lat)
			q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(q(0.50), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
			b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "asks/s")
		})
	}
}
