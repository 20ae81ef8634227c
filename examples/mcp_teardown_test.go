package examples

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/snuggen/snuggen/internal/browsertest"
)

// memoApp saves as model-written apps do: once typing pauses, and whatever
// is left when the host hides it (the visibility event).
const memoApp = `<!doctype html><html><head><meta charset="utf-8"><title>Memo</title>
<meta name="snug:display-name" content="Memo"></head>
<body><textarea id="text"></textarea><p id="status">loading</p><script>
const text = document.getElementById("text");
let timer;
const save = () => (clearTimeout(timer), snug.db.set("memo", text.value));
snug.ready.then(async () => {
  text.value = (await snug.db.get("memo")) ?? "";
  document.getElementById("status").textContent = "ready";
});
text.addEventListener("input", () => (clearTimeout(timer), (timer = setTimeout(save, 3000))));
snug.on("visibility", ({ visible }) => visible || save());
</script></body></html>`

// TestTeardownKeepsTheLastEdit: in the published AppBridge, the host closes
// the app about 100 ms after the user's last edit, well before the app's
// autosave timer. ui/resource-teardown tells the app it is going (the
// visibility event), the app saves, and the view answers only once that
// write is answered, so the edit is there when the app is opened again.
func TestTeardownKeepsTheLastEdit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "memo.html")
	if err := os.WriteFile(p, []byte(memoApp), 0o644); err != nil {
		t.Fatal(err)
	}
	h := openMCPHostOf(t, []string{"memo"}, p)
	a := h.show("memo")
	a.waitText("#status", "ready")
	a.fill("#text", "the last edit")
	took := browsertest.Eval[float64](t, h.tab, `new Promise((r) => setTimeout(r, 100)).then(() => teardownApp("app"))`)
	t.Logf("the view answered ui/resource-teardown in %.0f ms", took)
	b := h.show("memo")
	b.waitText("#status", "ready")
	if got := b.eval(`document.getElementById("text").value`); got != "the last edit" {
		t.Fatalf("after the app was opened again: %q, want the last edit", got)
	}
}
