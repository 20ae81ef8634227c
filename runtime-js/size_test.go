package runtimejs

import (
	"bytes"
	"compress/gzip"
	"testing"
)

// MCPBudget is the MCP flavour's budget in min+gzip bytes, with every
// member (an app that names few gets a tree-shaken variant: MCPAskBudget).
// The issue asked for 3 KB; when it landed the shared API layer alone was
// 2,650 B and the MCP transport about 920 B (3,574 B). Issue 14 added links
// with openUrl, URL serialization, saveFile with the <a download> route,
// ui/download-file and onPartial's reader: 5,152 B (5,048 B after issue
// 16's third pass as a page carries it, 4,994 B after the fourth, 4,855 B
// after the fifth; this test counts the generated-file header line too:
// 4,889 B; 4,917 B since issue 28's beforeunload check, +28 B; 4,950 B
// since issue 28 item 11: an absent capability is CAPABILITY_ABSENT, and
// ready does not wait for a tool result a host without serverTools may
// never send, +33 B). docs/decisions.md ("MCP Apps: the runtime's budget")
// has the floor of each part; raise this only with a line there.
const MCPBudget = 4950

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
