package cli

import "github.com/snuggen/snuggen/frame"

// protocolVersion is the protocol version snuggen speaks, from the generated
// frame package.
const protocolVersion = frame.Version
