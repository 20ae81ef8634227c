// Package schemas is the machine-readable Snug spec: one JSON Schema (draft
// 2020-12) per frame type, the error object, the chat envelope, and rules.json
// for what JSON Schema cannot carry (size classes, strict frames, refinements,
// lists, the error registry, events, the sandbox policy). It holds data only;
// gen/load reads it and snuggen gen turns it into code.
package schemas

import "embed"

// FS holds every file of the spec: *.schema.json and rules.json.
//
//go:embed *.schema.json rules.json
var FS embed.FS

// RulesFile is the name of the rules file inside FS.
const RulesFile = "rules.json"
