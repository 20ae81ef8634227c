// Package templates holds the text templates snuggen renders: the
// generator's under js/ (gen/js: the generated JS modules) and doc/
// (gen/doc: docs/protocol.md) in FS, the authoring guide (guide.go) and the
// snuggen new scaffolds (scaffold.go). It exports them as embed.FS values so
// packages outside this directory can read them (go:embed cannot reach
// "../"). It holds no logic.
package templates

import "embed"

// FS holds the generator's templates: js/*.tmpl and doc/*.tmpl.
//
//go:embed js doc
var FS embed.FS
