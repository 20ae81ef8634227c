package hostkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/hostkit"
)

// ExampleNew wires a host with one app and plays the runner page's part over
// the relay WebSocket: it mounts a frame, reports its load, and sends one
// app-message; the broker answers host-ready, then the offline agent's
// terminal app-response.
func ExampleNew() {
	h, err := hostkit.New(hostkit.WithApps(hostkit.BuiltApp("hello",
		[]byte("<!doctype html><title>Hello</title>"), hostkit.Meta{AppID: "example.hello", DisplayName: "Hello"})))
	if err != nil {
		fmt.Println(err)
		return
	}
	go h.Serve()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer h.Shutdown(ctx)

	// The relay accepts only the runner's own origin.
	ws, _, err := websocket.Dial(ctx, strings.Replace(h.Origin(), "http", "ws", 1)+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {h.Origin()}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ws.CloseNow()
	send := func(msg string) { _ = ws.Write(ctx, websocket.MessageText, []byte(msg)) }
	next := func() map[string]any {
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				return nil
			}
			var m struct {
				T     string         `json:"t"`
				Frame map[string]any `json:"frame"`
			}
			if json.Unmarshal(data, &m) == nil && m.T == "frame" {
				return m.Frame
			}
		}
	}

	send(`{"t":"mount","slot":"s1","app":"hello"}`)
	send(`{"t":"load","slot":"s1"}`)
	ready := next()
	fmt.Println(ready["type"], ready["protocolVersions"])

	send(fmt.Sprintf(`{"t":"frame","slot":"s1","frame":{"v":1,"type":"snug:app-message","requestId":"r1","instanceId":%q,"appId":"example.hello","action":"greet"}}`, ready["instanceId"]))
	for {
		f := next()
		if f == nil {
			fmt.Println("the connection ended")
			return
		}
		if f["streaming"] == true {
			continue
		}
		fmt.Println(f["type"], f["requestId"], f["ok"])
		break
	}
	// Output:
	// snug:host-ready [1]
	// snug:app-response r1 true
}
