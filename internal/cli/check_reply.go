package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
)

type checkReplyOptions struct {
	schemaFile string
}

func newCheckReplyCmd(io *IO) *cobra.Command {
	opts := &checkReplyOptions{}
	c := &cobra.Command{
		Use:   "reply [FILE|-]",
		Short: "Parse an agent reply the way the host does (raw, fenced block, balanced object)",
		Long: `Parse an agent's reply text with the host's graduated parser: the whole
text, then each fenced code block, then each balanced {...} span. A JSON
object prints {"ok":true,"data":{...}} (exit 0); anything else prints
{"ok":false,"code":"PARSE_FAILED","rawExcerpt":"..."} (exit 1) and the reason
on stderr. With --schema the data must also be valid against that JSON
Schema, as for an app-message's responseSchema. FILE "-" or none reads stdin.`,
		Example: `  snuggen check reply reply.txt
  echo 'Sure! {"message":"hi"}' | snuggen check reply -
  snuggen check reply --schema card.schema.json reply.txt`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, _, err := agentCheckInput(io, args)
			if err != nil {
				return err
			}
			var schema json.RawMessage
			if opts.schemaFile != "" {
				if schema, err = os.ReadFile(opts.schemaFile); err != nil {
					return &ExitError{Code: exitUsage, Err: fmt.Errorf("check reply: %w", err)}
				}
			}
			data, err := agent.ParseReply(string(text), schema)
			var se *agent.SchemaError
			if errors.As(err, &se) {
				return &ExitError{Code: exitUsage, Err: fmt.Errorf("check reply: %s: %w (fix the schema; $ref may only point inside it)", opts.schemaFile, err)}
			}
			var re *agent.ReplyError
			if errors.As(err, &re) {
				if err := agentCheckJSON(io.Out, struct {
					OK         bool   `json:"ok"`
					Code       string `json:"code"`
					RawExcerpt string `json:"rawExcerpt"`
				}{false, frame.CodeParseFailed, re.RawExcerpt}); err != nil {
					return err
				}
				where := agentCheckName(args)
				if where == "-" {
					where = "stdin"
				}
				fmt.Fprintf(io.Err, "snuggen: %s: %s\n", where, re.Reason)
				return silentExit(exitFailure)
			}
			if err != nil {
				return err
			}
			return agentCheckJSON(io.Out, struct {
				OK   bool            `json:"ok"`
				Data json.RawMessage `json:"data"`
			}{true, data})
		},
	}
	c.Flags().StringVar(&opts.schemaFile, "schema", "", "a JSON Schema `FILE` the data must be valid against")
	return c
}

func newCheckEnvelopeCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "envelope [FILE|-]",
		Short: "Tell whether a chat message is a Snug app request (tag prefix and snug: 1)",
		Long: `Apply the host's Detect to a chat message: it is an app request only when
it starts with the envelope tag and a newline, followed by one JSON object that
carries snug: 1 and is a valid chat envelope. An app request prints
{"app":true,"envelope":{...}} (exit 0); anything else prints {"app":false}
(exit 1). FILE "-" or none reads stdin.`,
		Example: `  snuggen check envelope message.txt
  printf '[SNUG_APP_REQUEST]\n{"snug":1,"appId":"a","instanceId":"i","requestId":"r","action":"go"}' | snuggen check envelope -`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, _, err := agentCheckInput(io, args)
			if err != nil {
				return err
			}
			env, ok := agent.Detect(string(text))
			if !ok {
				if err := agentCheckJSON(io.Out, struct {
					App bool `json:"app"`
				}{false}); err != nil {
					return err
				}
				return silentExit(exitFailure)
			}
			// The envelope as the host reads it: marker first, then its members.
			wire, err := frame.MarshalEnvelope(env)
			if err != nil {
				return err
			}
			return agentCheckJSON(io.Out, struct {
				App      bool            `json:"app"`
				Envelope json.RawMessage `json:"envelope"`
			}{true, json.RawMessage(strings.TrimPrefix(string(wire), frame.EnvelopeTag+"\n"))})
		},
	}
}

// agentCheckInput reads the file named by args[0], or stdin for "-" or no
// argument. A file that cannot be read is a usage error (exit 2).
func agentCheckInput(io *IO, args []string) ([]byte, string, error) {
	name := agentCheckName(args)
	if name == "-" {
		b, err := agentCheckReadAll(io.In)
		if err != nil {
			return nil, name, &ExitError{Code: exitUsage, Err: fmt.Errorf("reading stdin: %w", err)}
		}
		return b, name, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, name, &ExitError{Code: exitUsage, Err: err}
	}
	return b, name, nil
}

func agentCheckName(args []string) string {
	if len(args) == 0 {
		return "-"
	}
	return args[0]
}

func agentCheckReadAll(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	return io.ReadAll(r)
}

// agentCheckJSON writes v as one line of JSON without HTML escaping.
func agentCheckJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
