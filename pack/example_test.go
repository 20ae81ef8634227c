package pack_test

import (
	"context"
	"fmt"
	"testing/fstest"

	"github.com/snuggen/snuggen/pack"
)

// Build packages a page and the files beside it from any fs.FS; a host
// packaging an LLM's raw HTML passes Options.HTML instead.
func ExampleBuild() {
	app := fstest.MapFS{
		"index.html": {Data: []byte(`<!doctype html>
<meta name="snug:app-id" content="demo.counter">
<meta name="snug:display-name" content="Counter">
<button id="b">0</button>
<script type="module" src="main.js"></script>`)},
		"main.js": {Data: []byte(`import { inc } from "./count.js";
const b = document.getElementById("b");
b.addEventListener("click", async () => {
  b.textContent = inc();
  await snug.db.set("count", Number(b.textContent));
  if (confirm("Reset?")) b.textContent = "0";
});`)},
		"count.js": {Data: []byte(`let n = 0; export const inc = () => ++n;`)},
	}
	res, err := pack.Build(context.Background(), pack.Options{Path: "index.html", FS: app})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Manifest.AppID, res.Manifest.DisplayName, res.Manifest.Capabilities)
	for _, d := range res.Diagnostics {
		fmt.Printf("%s:%d:%d: %s: %s\n", d.File, d.Line, d.Column, d.Severity, d.Message)
	}
	// Output:
	// demo.counter Counter [db]
	// main.js:6:7: warning: confirm is not available in the sandbox
}
