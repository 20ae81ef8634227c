package pack

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
)

// TestImportCycles: the cycle check reads the import graph the plugin
// records, and reports what it reported when it read esbuild's metafile
// (each want below is that check's output): CSS @import, two cycles (the
// first module name in order wins), an import written twice, require and
// import(), and a cycle through a data: URL module, named as esbuild names
// it (cut after 64 bytes, a newline escaped).
func TestImportCycles(t *testing.T) {
	page := func(body string) string { return "<!doctype html><title>c</title>" + body }
	longData := `data:text/javascript,import "./a.js"; export default 1 // a long comment to pass the sixty-four bytes of the name\n`
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"css", map[string]string{"index.html": page(`<link rel="stylesheet" href="a.css">`),
			"a.css": "@import \"b.css\";\nbody{color:red}\n", "b.css": "@import \"./a.css\";\np{color:blue}\n"},
			"b.css: error: import cycle: a.css → b.css → a.css"},
		{"two cycles", map[string]string{"index.html": page(`<script type="module">import "./x.js"; import "./a.js";</script>`),
			"x.js": "import \"./y.js\";\nexport const x = 1;\n", "y.js": "import { x } from \"./x.js\";\nconsole.log(x);\n",
			"a.js": "import \"./b.js\";\nexport const a = 1;\n", "b.js": "import { a } from \"./a.js\";\nconsole.log(a);\n"},
			"b.js:1:19: error: import cycle: a.js → b.js → a.js"},
		{"two specifiers", map[string]string{"index.html": page(`<script type="module" src="./a.js"></script>`),
			"a.js": "import \"./b.js\";\nimport { b } from \"./b\";\nexport const a = b;\n",
			"b.js": "import { a } from \"./a.js\";\nexport const b = 2;\nconsole.log(a);\n"},
			"b.js:1:19: error: import cycle: a.js → b.js → a.js"},
		{"require and import()", map[string]string{"index.html": page(`<script type="module" src="./a.js"></script>`),
			"a.js": "const b = require(\"./b.js\");\nexport const a = 1;\n", "b.js": "const { a } = await import(\"./a.js\");\nexport const b = a;\n"},
			"b.js:1:28: error: import cycle: a.js → b.js → a.js"},
		{"data: URL", map[string]string{"index.html": page(`<script type="module" src="./a.js"></script>`),
			"a.js": "import x from 'data:text/javascript,import \"./a.js\"; export default 1';\nconsole.log(x);\n"},
			`a.js:1:15: error: import cycle: <data:text/javascript,import "./a.js"; export default 1> → a.js → <data:text/javascript,import "./a.js"; export default 1>`},
		{"long data: URL", map[string]string{"index.html": page(`<script type="module" src="./a.js"></script>`),
			"a.js": "import x from " + jsQuote(longData) + ";\nconsole.log(x);\n"},
			`a.js: error: import cycle: <data:text/javascript,import "./a.js"; export default 1 // a long...> → a.js → <data:text/javascript,import "./a.js"; export default 1 // a long...>`},
	} {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range c.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data)}
			}
			res, err := Build(context.Background(), Options{Path: "index.html", FS: fsys, Runtime: []byte(testRuntime)})
			if err == nil {
				t.Fatal("the build passed")
			}
			var got []string
			for _, d := range res.Diagnostics {
				if d.Code == "import.cycle" {
					got = append(got, d.String())
				}
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], c.want+" (") {
				t.Errorf("import.cycle diagnostics:\n%s\nwant one starting %q", strings.Join(got, "\n"), c.want)
			}
		})
	}
}

func jsQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
