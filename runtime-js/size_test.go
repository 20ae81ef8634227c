package runtimejs

import (
	"bytes"
	"compress/gzip"
	"testing"
)

// MCPBudget is the MCP flavour's budget in min+gzip bytes. The issue asked
// for 3 KB; the shared API layer alone is 2,650 B since the size refusal
// landed, and the MCP transport (handshake, tools/call with parts,
// open-link, theme, cancel, resize) about 920 B, so 3 KB would mean dropping
// API. Issue 14 added about 1,500 B to the shared layer (links and
// navigations, URL serialization, onPartial, saveFile and refusals as
// errors) and ui/download-file to the transport: 5,156 B when it landed.
// docs/decisions.md has the measurements; raise this only with a line there.
const MCPBudget = 5248

// SnugBudget is the Snug runtime's (dist/snug.js) budget in min+gzip bytes:
// what it measured when the budget was set (4,486 B with host-ready's BCP 47
// locale pattern in its acceptors), rounded up. Issue 16 tightens it; raise
// it only with a line in docs/decisions.md.
const SnugBudget = 4500

func gzipped(t *testing.T, b []byte) int {
	t.Helper()
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}

// TestSnugRuntimeSize holds the runtime every app carries to its budget.
func TestSnugRuntimeSize(t *testing.T) {
	snug := gzipped(t, Script)
	t.Logf("min+gzip: snug.js %d B (budget %d), min %d B", snug, SnugBudget, len(Script))
	if snug > SnugBudget {
		t.Errorf("dist/snug.js is %d B min+gzip, past its budget of %d B: measure what grew (bench/runtime-size/run) before raising it", snug, SnugBudget)
	}
}

// TestMCPFlavourSize holds the MCP runtime to its budget, below the Snug
// runtime, and free of the Snug transport's parts: the acceptors of Snug
// frames and the error-code registry (the server renders unknown codes).
func TestMCPFlavourSize(t *testing.T) {
	mcp, snug := gzipped(t, ScriptMCP), gzipped(t, Script)
	t.Logf("min+gzip: snug.js %d B, snug-mcp.js %d B (budget %d)", snug, mcp, MCPBudget)
	if mcp > MCPBudget {
		t.Errorf("dist/snug-mcp.js is %d B min+gzip, past its budget of %d B", mcp, MCPBudget)
	}
	if mcp >= snug {
		t.Errorf("the MCP runtime (%d B) is not smaller than the Snug one (%d B): has a Snug-only part leaked into the shared layer?", mcp, snug)
	}
	for _, snugOnly := range []string{"THREAD_CONFLICT", "snug:app-response\":"} {
		if bytes.Contains(ScriptMCP, []byte(snugOnly)) {
			t.Errorf("the MCP runtime carries %q, a part of the Snug transport", snugOnly)
		}
	}
	if !bytes.Contains(Script, []byte("THREAD_CONFLICT")) {
		t.Error("the Snug runtime lost its code registry (R5)")
	}
}
