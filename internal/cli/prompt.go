package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen/internal/guide"
)

func newPromptCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "prompt",
		Short: "Print the authoring guide for an LLM writing a Snug app",
		Long: `Prints, as Markdown, what an LLM needs to write a Snug app: what an app is,
the sandbox rules, the whole snug API with one example each, the reply
contract the host's agent follows, and the mistakes snuggen build rejects.
The guide is built from the runtime's typings, the agent bridge and the
packager themselves, so it says what the tools do.`,
		Example: `  snuggen prompt > snug-guide.md
  snuggen prompt | llm -s - "write a Snug app that tracks my reading list"`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := guide.Render(cmd.Context())
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(io.Out, text)
			return err
		},
	}
}
