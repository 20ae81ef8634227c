// Package snuggen holds what the toolchain embeds from the module's root:
// its go.sum, the single source of the checksums a new host module starts
// with (snuggen new host), so that module's go mod tidy finds every module
// snuggen itself was verified against already checked and needs no checksum
// database. It is not the toolchain's API: import the packages under it.
package snuggen

import _ "embed"

// GoSum is this module's go.sum as it was when the binary was built.
//
//go:embed go.sum
var GoSum string
