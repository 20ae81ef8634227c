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

// Overrides are choices that win over the environment (a command line's
// flags); an empty field leaves the variable it stands for in charge.
type Overrides struct {
	Name    string // instead of Var
	BaseURL string // instead of the backend's base-URL variable
	Model   string // instead of the backend's model variable
}

// FromEnvWith is FromEnv with o's choices in place of the variables they
// stand for. A base URL or model for the offline agent is an error: it has
// neither.
func FromEnvWith(getenv func(string) string, o Overrides) (agent.Backend, string, error) {
	name := o.Name
	if name == "" {
		name = getenv(Var)
	}
	name = strings.ToLower(strings.TrimSpace(name))
	set := map[string]string{Var: name}
	switch name {
	case "", "offline", "mock":
		if o.BaseURL != "" || o.Model != "" {
			return nil, "", fmt.Errorf("the offline agent takes no base URL or model; name openai or anthropic")
		}
	case "openai":
		set[openai.EnvBaseURL], set[openai.EnvModel] = o.BaseURL, o.Model
	case "anthropic":
		set[anthropic.EnvBaseURL], set[anthropic.EnvModel] = o.BaseURL, o.Model
	}
	return FromEnv(func(k string) string {
		if v, ok := set[k]; ok && (v != "" || k == Var) {
			return v
		}
		return getenv(k)
	})
}

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
