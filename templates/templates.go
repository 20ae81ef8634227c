// Package templates holds the text templates snuggen renders: the JS
// emission templates under js/ (used by gen/js). It exports them as one
// embed.FS so packages outside this directory can read them (go:embed cannot
// reach "../"). It holds no logic.
package templates

import "embed"

// FS holds js/*.tmpl.
//
//go:embed js
var FS embed.FS
