package templates

import _ "embed"

// Guide is the text/template of the LLM authoring guide that `snuggen prompt`
// prints. Its API section, reply contract and diagnostics are filled in from
// the runtime's typings, the agent bridge and the packager.
//
//go:embed guide/prompt.md.tmpl
var Guide string
