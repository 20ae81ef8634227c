package broker

import (
	"context"

	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/frame"
)

// Agent answers app-message with an agent.Bridge. The Bridge's per-instance
// state (the parse-failure budget) is keyed by the host-minted instanceId and
// forgotten when the instance dies.
func Agent(b *agent.Bridge) AgentHandler { return bridgeAgent{b} }

type bridgeAgent struct{ b *agent.Bridge }

func (a bridgeAgent) AppMessage(ctx context.Context, c Call, m *frame.AppMessage, stream func(string)) *frame.AppResponse {
	data, ferr := a.b.Ask(ctx, c.InstanceID, m, stream)
	if ferr != nil {
		return &frame.AppResponse{RequestID: m.RequestID, OK: false, Error: ferr}
	}
	return finalFrame(m.RequestID, data)
}

func (a bridgeAgent) Forget(instanceKey string) { a.b.Forget(instanceKey) }
