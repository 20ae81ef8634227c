package cli

// protocolVersion is replaced by the generated frame.Version once
// hostkit/frame exists.
const protocolVersion = 1
