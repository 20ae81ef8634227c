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
