package pack

import "github.com/snuggen/snuggen/frame"

// The sandbox policy comes from the generated frame package (schemas/rules.json).

type cspDirective = frame.CSPDirective

func cdnAllowlist() []string     { return frame.CDNAllowlist }
func sandboxCSP() []cspDirective { return frame.SandboxCSP }
