package runtimejs

import _ "embed"

// Types is snug.d.ts: the runtime's API with a doc comment and an example per
// method. `snuggen prompt` builds the authoring guide's API section from it,
// so the guide and the typings cannot drift apart.
//
//go:embed snug.d.ts
var Types string
