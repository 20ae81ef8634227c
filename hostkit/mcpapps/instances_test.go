package mcpapps_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/mcpapps"
)

// TestInstanceCapPerUser: every open tool call mints a new instance, and
// each instance used holds a broker session until it has been idle for
// Idle (30 minutes): a client that opens and calls in a loop would hold
// one per call. One user keeps MaxInstances at most: the next closes the
// least recently used one no call is using (its handle still works and
// opens it afresh), and when every one is in use the call is refused.
func TestInstanceCapPerUser(t *testing.T) {
	const max = 4
	e := newEnv(t, func(o *mcpapps.Options) { o.MaxInstances = max })
	cs := e.connect(t, true, "", nil)
	get := map[string]any{"type": frame.TypeDBRequest, "op": "kvGet", "key": "k"}
	var opened []session
	for i := range 3 * max {
		s := open(t, cs, "notes")
		if f, res := call(t, cs, s, get); f == nil {
			t.Fatalf("instance %d: %s", i+1, toolText(res))
		}
		opened = append(opened, s)
		if n := e.srv.Instances(""); n > max || n != min(i+1, max) {
			t.Fatalf("after %d instances the user holds %d, want %d", i+1, n, min(i+1, max))
		}
	}
	// The first, closed long ago, answers again.
	if f, res := call(t, cs, opened[0], get); f == nil {
		t.Fatalf("the first handle again: %s", toolText(res))
	}
	if n := e.srv.Instances(""); n != max {
		t.Fatalf("the user holds %d, want %d", n, max)
	}

	// Every instance in use: one more is refused, and the ones in use stay.
	var release []func()
	for _, s := range opened[len(opened)-max:] {
		release = append(release, e.srv.HoldInstance(t, "", "notes", s.Handle))
	}
	s := open(t, cs, "notes")
	f := map[string]any{"v": 1, "type": frame.TypeDBRequest, "requestId": "capped", "instanceId": s.InstanceID, "op": "kvGet", "key": "k"}
	params := &mcp.CallToolParams{Name: s.Tools[frame.TypeDBRequest], Arguments: map[string]any{"handle": s.Handle, "frame": f}}
	if _, err := cs.CallTool(t.Context(), params); err == nil || !strings.Contains(err.Error(), "all answering calls") {
		t.Fatalf("a new instance while every one is in use: %v", err)
	}
	if n := e.srv.Instances(""); n != max {
		t.Fatalf("the user holds %d after the refusal, want %d", n, max)
	}
	release[0]()
	if f, res := call(t, cs, s, get); f == nil {
		t.Fatalf("once one call ended: %s", toolText(res))
	}
	for _, r := range release[1:] {
		r()
	}
}
