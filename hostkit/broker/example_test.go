package broker_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
)

// printPort is a Port that prints each frame's type and answer, in order.
type printPort chan string

func (p printPort) Send(f frame.Frame, raw []byte) {
	var v struct {
		RequestID string          `json:"requestId"`
		Text      string          `json:"text"`
		Data      json.RawMessage `json:"data"`
		Error     *frame.Error    `json:"error"`
	}
	_ = json.Unmarshal(raw, &v)
	switch {
	case v.Error != nil:
		p <- fmt.Sprintf("%s %s %s", f.FrameType(), v.RequestID, v.Error.Code)
	case v.Text != "":
		p <- fmt.Sprintf("%s %s text %q", f.FrameType(), v.RequestID, v.Text)
	case v.Data != nil:
		p <- fmt.Sprintf("%s %s data %s", f.FrameType(), v.RequestID, v.Data)
	default:
		p <- f.FrameType()
	}
}

// A transport opens a session per iframe, reports its load, and hands the
// broker every frame the iframe sends; the answers come back through the
// session's Port. Here the agent is a function that streams once and answers.
func Example() {
	b := broker.New(broker.Options{
		Agent: broker.AgentFunc(func(ctx context.Context, c broker.Call, m *frame.AppMessage, stream func(string)) *frame.AppResponse {
			stream("Thinking")
			return &frame.AppResponse{OK: true, Streaming: new(bool), Data: json.RawMessage(`{"message":"hi"}`)}
		}),
	})
	defer b.Shutdown(context.Background())

	port := make(printPort, 8)
	s, _ := b.Open("notes", port) // the installed app's key, never the announced appId
	s.Load()
	fmt.Println(<-port)

	ask := fmt.Sprintf(`{"v":1,"type":"snug:app-message","requestId":"r1","instanceId":%q,"appId":"x","action":"hello"}`, s.InstanceID())
	fmt.Println(s.Receive(context.Background(), []byte(ask)).Verdict)
	fmt.Println(<-port)
	fmt.Println(<-port)

	// The same requestId again: refused, and nothing is sent for it.
	v := s.Receive(context.Background(), []byte(ask))
	fmt.Println(v.Verdict, v.Code)
	// Output:
	// snug:host-ready
	// accept
	// snug:app-response r1 text "Thinking"
	// snug:app-response r1 data {"message":"hi"}
	// reject MALFORMED
}
