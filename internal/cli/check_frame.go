package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen/frame"
)

func newCheckFrameCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "frame [FILE|-]",
		Short: "Parse one JSON frame the way a host does and print the verdict",
		Long: `frame reads one JSON frame (from FILE, or standard input when FILE is - or
absent) and prints one JSON line: the verdict (accept, ignore or reject), and for
a rejected frame the code, the recovered requestId, the answer frame the host
would send (null when no requestId was recovered, R1) and the violations.
Exit status: 0 accept or ignore, 1 reject, 2 unusable input (not JSON, unreadable).`,
		Example: `  snuggen check frame frame.json
  echo '{"v":1,"type":"snug:app-cancel","requestId":"r1","instanceId":"i1"}' | snuggen check frame -
  echo '{"v":1,"type":"snug:net-request","requestId":"r1","instanceId":"i1","url":"https://x.test/","method":"GET","headers":{"Authorization":"t"}}' | snuggen check frame`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "-"
			if len(args) == 1 {
				name = args[0]
			}
			return runCheckFrame(io, name)
		},
	}
}

// Verdict is the JSON line snuggen check frame prints; the JS checkFrame
// returns the same object.
type Verdict struct {
	Verdict   string            `json:"verdict"`
	Type      string            `json:"type,omitempty"`
	Code      string            `json:"code,omitempty"`
	RequestID *string           `json:"requestId,omitempty"`
	Answer    json.RawMessage   `json:"answer,omitempty"`
	Errors    []frame.Violation `json:"errors,omitempty"`
}

// CheckFrame parses raw as a host does and returns its verdict.
func CheckFrame(raw []byte) (Verdict, error) {
	f, err := frame.Parse(raw)
	switch {
	case err == nil && f != nil:
		return Verdict{Verdict: "accept", Type: f.FrameType()}, nil
	case err == nil:
		// Parse ignored it, so raw is an object with a string type. Keys are
		// case-sensitive: a map keeps "type" apart from "TYPE", a struct would not.
		var head map[string]json.RawMessage
		var typ string
		if json.Unmarshal(raw, &head) == nil {
			_ = json.Unmarshal(head["type"], &typ)
		}
		return Verdict{Verdict: "ignore", Type: typ}, nil
	}
	var re *frame.RejectError
	if !errors.As(err, &re) {
		return Verdict{}, err
	}
	v := Verdict{Verdict: "reject", Code: re.Code, Errors: re.Violations, Answer: json.RawMessage("null")}
	if re.HasRequestID {
		id := re.RequestID
		v.RequestID = &id
		if a := re.Answer(); a != nil {
			b, err := frame.Marshal(a)
			if err != nil {
				return Verdict{}, err
			}
			v.Answer = b
		}
	}
	return v, nil
}

// MarshalJSON prints requestId and answer as null on a reject without one,
// and leaves them out of accept and ignore.
func (v Verdict) MarshalJSON() ([]byte, error) {
	type plain Verdict
	if v.Verdict != "reject" {
		return json.Marshal(plain(v))
	}
	type reject struct {
		Verdict   string            `json:"verdict"`
		Code      string            `json:"code"`
		RequestID *string           `json:"requestId"`
		Answer    json.RawMessage   `json:"answer"`
		Errors    []frame.Violation `json:"errors"`
	}
	return json.Marshal(reject{Verdict: v.Verdict, Code: v.Code, RequestID: v.RequestID, Answer: v.Answer, Errors: v.Errors})
}

func runCheckFrame(io *IO, name string) error {
	var raw []byte
	var err error
	if name == "-" {
		raw, err = readAllLimited(io.In)
	} else {
		raw, err = os.ReadFile(name)
	}
	if err != nil {
		return &ExitError{Code: exitUsage, Err: fmt.Errorf("check frame: %w", err)}
	}
	if !json.Valid(raw) {
		var se *json.SyntaxError
		msg := "not JSON"
		if err := json.Unmarshal(raw, new(any)); errors.As(err, &se) {
			line, col := lineColAt(raw, max(0, int(se.Offset)-1))
			msg = fmt.Sprintf("%s:%d:%d: not JSON: %v", displayName(name), line, col, se)
		}
		return &ExitError{Code: exitUsage, Err: fmt.Errorf("check frame: %s (a frame is one JSON object)", msg)}
	}
	// JSON text is UTF-8 (RFC 8259 §8.1); encoding/json lets invalid bytes
	// through inside strings, but such input is as unusable as a syntax error.
	if !utf8.Valid(raw) {
		off := 0
		for off < len(raw) {
			r, n := utf8.DecodeRune(raw[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		line, col := lineColAt(raw, off)
		return &ExitError{Code: exitUsage, Err: fmt.Errorf("check frame: %s:%d:%d: not JSON: invalid UTF-8 (a frame is one JSON object)", displayName(name), line, col)}
	}
	v, err := CheckFrame(raw)
	if err != nil {
		return &ExitError{Code: exitUsage, Err: fmt.Errorf("check frame: %w", err)}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("check frame: %w", err)
	}
	fmt.Fprintln(io.Out, string(b))
	if v.Verdict == "reject" {
		return silentExit(exitFailure)
	}
	return nil
}

func displayName(name string) string {
	if name == "-" {
		return "<stdin>"
	}
	return name
}

// readAllLimited reads a frame from r, refusing more than the largest size
// class plus one byte (so a too-large frame is still rejected as too large).
func readAllLimited(r io.Reader) ([]byte, error) {
	limit := int64(frame.MaxDBFrameBytes) * 2
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("input larger than %d bytes", limit)
	}
	return b, nil
}

func lineColAt(b []byte, off int) (int, int) {
	line, col := 1, 1
	for i := 0; i < off && i < len(b); i++ {
		if b[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
