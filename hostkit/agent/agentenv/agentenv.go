// Package agentenv picks the host's agent backend from the environment, so a
// command like "snuggen serve" runs offline by default and talks to a real
// model when told to. Its limit: it reads configuration; it makes no request.
package agentenv

import (
	"fmt"
	"strings"

	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/anthropic"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/agent/openai"
)

// Var names the backend: "offline" (the default; "mock" is accepted as an old
// name for it), "openai" or "anthropic".
// Each backend reads its own variables (openai.EnvModel, anthropic.EnvAPIKey, …).
const Var = "SNUG_AGENT"

// Names lists the accepted values of Var.
var Names = []string{"offline", "openai", "anthropic"}

// FromEnv returns the backend Var names, configured through getenv
// (os.Getenv in a host), and its name.
func FromEnv(getenv func(string) string) (agent.Backend, string, error) {
	name := strings.ToLower(strings.TrimSpace(getenv(Var)))
	switch name {
	case "", "offline", "mock":
		return offline.New(offline.Options{}), "offline", nil
	case "openai":
		b, err := openai.FromEnv(getenv)
		if err != nil {
			return nil, "", fmt.Errorf("%s=openai: %w", Var, err)
		}
		return b, name, nil
	case "anthropic":
		b, err := anthropic.FromEnv(getenv)
		if err != nil {
			return nil, "", fmt.Errorf("%s=anthropic: %w", Var, err)
		}
		if getenv(anthropic.EnvAPIKey) == "" && getenv(anthropic.EnvBaseURL) == "" {
			return nil, "", fmt.Errorf("%s=anthropic: set %s", Var, anthropic.EnvAPIKey)
		}
		return b, name, nil
	}
	return nil, "", fmt.Errorf("%s=%q: unknown agent; use one of %s", Var, name, strings.Join(Names, ", "))
}
