package agent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
)

func ExampleParseReply() {
	data, err := agent.ParseReply("Sure! Here it is:\n```json\n{\"message\": \"Two items left.\"}\n```", nil)
	fmt.Println(string(data), err)

	_, err = agent.ParseReply("I could not find anything.", nil)
	fmt.Println(err)
	// Output:
	// {"message":"Two items left."} <nil>
	// agent reply: no JSON object in the reply
}

func ExampleEnvelope() {
	m := &frame.AppMessage{RequestID: "r1", InstanceID: "i1", AppID: "todo", Action: "add",
		Payload: json.RawMessage(`{"text":"milk","headers":{"Authorization":"Bearer x"}}`)}
	env, _ := agent.Envelope("todo", m)
	fmt.Println(string(env))
	got, ok := agent.Detect(string(env))
	fmt.Println(ok, got.Action)
	// Output:
	// [SNUG_APP_REQUEST]
	// {"snug":1,"appId":"todo","instanceId":"i1","requestId":"r1","action":"add","payload":{"text":"milk","headers":{}}}
	// true add
}

func ExampleBridge_Ask() {
	br := agent.NewBridge(offline.New(offline.Options{}), agent.Options{})
	m := &frame.AppMessage{RequestID: "r1", InstanceID: "i1", AppID: "todo", Action: "suggest",
		ResponseSchema: json.RawMessage(`{"type":"object","required":["title"],"properties":{"title":{"type":"string","maxLength":20}}}`)}
	data, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "slot-1"}, m, nil)
	fmt.Println(string(data), ferr == nil)
	// Output:
	// {"title":"sample title"} true
}
