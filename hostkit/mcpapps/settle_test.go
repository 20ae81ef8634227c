package mcpapps_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/mcpapps"
	"github.com/snuggen/snuggen/hostkit/netgate"
)

// stdioClient speaks raw JSON-RPC lines to Server.Run, as a desktop client
// does over a child's stdin and stdout.
type stdioClient struct {
	t    *testing.T
	in   *io.PipeWriter
	out  chan map[string]any
	done chan error
}

func runStdio(t *testing.T, srv *mcpapps.Server) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{t: t, in: inW, out: make(chan map[string]any, 64), done: make(chan error, 1)}
	go func() {
		err := srv.Run(context.Background(), &mcp.IOTransport{Reader: inR, Writer: outW})
		outW.Close()
		c.done <- err
	}()
	go func() {
		defer close(c.out)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.out <- m
			}
		}
	}()
	t.Cleanup(func() { inW.Close() })
	return c
}

func (c *stdioClient) send(m map[string]any) {
	c.t.Helper()
	m["jsonrpc"] = "2.0"
	b, _ := json.Marshal(m)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// until reads answers until the one to id, and returns them all.
func (c *stdioClient) until(id float64) []map[string]any {
	c.t.Helper()
	var seen []map[string]any
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-c.out:
			if !ok {
				c.t.Fatalf("stdout ended before the answer to %v; read %v", id, seen)
			}
			seen = append(seen, m)
			if m["id"] == id {
				return seen
			}
		case <-timeout:
			c.t.Fatalf("no answer to %v; read %v", id, seen)
		}
	}
}

// TestStdioSettlesEveryCall: over stdio a call the client cancelled gets no
// answer (MCP: the receiver should not respond), and a call read just before
// the client closed stdin still gets its answer.
func TestStdioSettlesEveryCall(t *testing.T) {
	hit, gone, release := make(chan struct{}, 4), make(chan struct{}, 4), make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- struct{}{}
		select {
		case <-release:
			io.WriteString(w, "late")
		case <-r.Context().Done():
			gone <- struct{}{}
		}
	}))
	t.Cleanup(upstream.Close)
	t.Cleanup(func() { close(release) }) // before Close: its handlers end
	ap := netip.MustParseAddrPort(strings.TrimPrefix(upstream.URL, "http://"))
	gate, err := netgate.New(netgate.Config{DevHTTPHosts: []string{"127.0.0.1"}}, netgate.WithAllowedAddrs(ap))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gate.Close() })
	if err := gate.Grant("notes", upstream.URL); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *mcpapps.Options) { o.Net = gate; o.UI = mcpapps.UIAlways })
	netReturned := make(chan struct{}, 4)
	e.srv.MCP("notes").AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p.Name == "notes__net" {
				netReturned <- struct{}{}
			}
			return res, err
		}
	})

	c := runStdio(t, e.srv)
	c.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}})
	c.until(1)
	c.send(map[string]any{"method": "notifications/initialized"})
	c.send(map[string]any{"id": 2, "method": "tools/call", "params": map[string]any{"name": "open_notes", "arguments": map[string]any{}}})
	opened := c.until(2)
	var s session
	remarshal(t, opened[len(opened)-1]["result"].(map[string]any)["_meta"].(map[string]any)[mcpapps.MetaSession], &s)
	fetch := func(id int, rid string) {
		c.send(map[string]any{"id": id, "method": "tools/call", "params": map[string]any{"name": "notes__net", "arguments": map[string]any{
			"handle": s.Handle, "frame": map[string]any{"v": 1, "type": frame.TypeNetRequest, "requestId": rid, "instanceId": s.InstanceID, "url": upstream.URL + "/slow", "method": "GET"}}}})
	}

	// Cancelled: the call ends (the broker cancels the request, the
	// upstream sees it go), and no answer to it is ever written.
	fetch(3, "n1")
	<-hit
	c.send(map[string]any{"method": "notifications/cancelled", "params": map[string]any{"requestId": 3, "reason": "the user closed it"}})
	<-netReturned
	<-gone
	c.send(map[string]any{"id": 4, "method": "ping"})
	for _, m := range c.until(4) {
		if m["id"] == float64(3) {
			t.Fatalf("the cancelled call was answered: %v", m)
		}
	}

	// Read just before stdin closes: the answer still comes.
	fetch(5, "n2")
	<-hit
	c.in.Close()
	select {
	case <-gone:
		t.Fatal("closing stdin cancelled the call read before it")
	case <-time.After(300 * time.Millisecond): // let the end of input be read first
	}
	release <- struct{}{}
	last := c.until(5)
	if r, _ := last[len(last)-1]["result"].(map[string]any); r == nil || r["isError"] == true {
		t.Fatalf("the last call's answer: %v", last[len(last)-1])
	}
	if err := <-c.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
