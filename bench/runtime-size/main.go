// Command runtime-size measures the Snug app runtime (runtime-js/dist/snug.js,
// as built by snuggen gen) against the app-side client of
// @modelcontextprotocol/ext-apps bundled the same way: esbuild from Go,
// bundled, minified, IIFE, then gzip -9. Run it through ./run, which installs
// the npm package into bench/.cache first.
//
//	go run ./bench/runtime-size -ext bench/.cache/node_modules
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/evanw/esbuild/pkg/api"
)

func main() {
	runtime := flag.String("runtime", "runtime-js/dist/snug.js", "the built Snug runtime")
	ext := flag.String("ext", "bench/.cache/node_modules", "node_modules holding @modelcontextprotocol/ext-apps")
	flag.Parse()
	if err := run(*runtime, *ext); err != nil {
		fmt.Fprintln(os.Stderr, "runtime-size:", err)
		os.Exit(1)
	}
}

func gz(b []byte) int {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Len()
}

// build bundles and minifies entry source resolved from dir, as an IIFE.
func build(contents, dir string) ([]byte, error) {
	res := api.Build(api.BuildOptions{
		Stdin:             &api.StdinOptions{Contents: contents, ResolveDir: dir, Sourcefile: "entry.js", Loader: api.LoaderJS},
		Bundle:            true,
		Format:            api.FormatIIFE,
		Target:            api.ES2022,
		Platform:          api.PlatformBrowser,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		TreeShaking:       api.TreeShakingTrue,
		LegalComments:     api.LegalCommentsNone,
		Charset:           api.CharsetUTF8,
		Write:             false,
		LogLevel:          api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		return nil, fmt.Errorf("esbuild: %s", res.Errors[0].Text)
	}
	return res.OutputFiles[0].Contents, nil
}

func run(runtimePath, ext string) error {
	// The runtime as apps ship it: snuggen gen bundles it with the options
	// build uses below (esbuild, bundled, minified, IIFE).
	snug, err := os.ReadFile(runtimePath)
	if err != nil {
		return err
	}
	extDir, _ := filepath.Abs(filepath.Dir(ext))
	// The app-side client: the App class and its postMessage transport, what
	// an MCP App's iframe ships.
	mcp, err := build(`import { App, PostMessageTransport } from "@modelcontextprotocol/ext-apps";
globalThis.mcpApp = { App, PostMessageTransport };`, extDir)
	if err != nil {
		return fmt.Errorf("bundle @modelcontextprotocol/ext-apps (run bench/runtime-size/run to install it): %w", err)
	}
	s, m := gz(snug), gz(mcp)
	fmt.Printf("%-44s %9s %12s\n", "bundle (esbuild, minified, iife)", "min B", "min+gzip B")
	fmt.Printf("%-44s %9d %12d\n", "snug runtime (runtime-js/dist/snug.js)", len(snug), s)
	fmt.Printf("%-44s %9d %12d\n", "@modelcontextprotocol/ext-apps App client", len(mcp), m)
	fmt.Printf("ratio snug/ext-apps: min %.3f, min+gzip %.3f (goal <= 0.100)\n", float64(len(snug))/float64(len(mcp)), float64(s)/float64(m))
	fmt.Printf("snug min+gzip budget: %d of 3072 B\n", s)
	return nil
}
