package conform

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/snuggen/snuggen/frame"
)

// Case statuses.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
)

// Report is what the kit leaves on its page when it is done (the JSON in
// its #report element and window.snugConform.report).
type Report struct {
	Kit             string   `json:"kit"`
	ProtocolVersion int      `json:"protocolVersion"`
	Started         string   `json:"started"`
	MS              int      `json:"ms"`
	Host            *Host    `json:"host"`
	Driver          *Driver  `json:"driver"`
	Only            []string `json:"only,omitempty"` // the cases a driver chose, when it chose
	Summary         Summary  `json:"summary"`
	Unexpected      []Dialog `json:"unexpectedDialogs"`
	Cases           []Case   `json:"cases"`
}

// Host is what the kit learned about the host from its handshake.
type Host struct {
	InstanceID       string          `json:"instanceId"`
	Transport        string          `json:"transport"` // "snug", "mcp-apps" or "unknown"
	ProtocolVersions []int           `json:"protocolVersions"`
	Capabilities     map[string]bool `json:"capabilities"`
	Theme            string          `json:"theme,omitempty"`
	Locale           string          `json:"locale,omitempty"`
}

// Driver is the driver that attached to the kit, if one did.
type Driver struct {
	Name    string `json:"name"`
	Dialogs bool   `json:"dialogs"`
}

// Dialog is a dialog the driver saw and denied while the kit asked for none.
type Dialog struct {
	Kind string `json:"kind"`
	URL  string `json:"url"`
}

// Summary counts the cases by status.
type Summary struct {
	Pass int `json:"pass"`
	Fail int `json:"fail"`
	Skip int `json:"skip"`
}

// Case is one case's result. Rule is the normative rule it checks (an id of
// frame.NormativeRules); Check, when set, is the frame rule, refinement or
// schema keyword that decided the expected answer.
type Case struct {
	ID       string `json:"id"`
	Rule     string `json:"rule"`
	Check    string `json:"check,omitempty"`
	Title    string `json:"title"`
	Expected string `json:"expected"`
	Got      string `json:"got"`
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"`
	MS       int    `json:"ms"`
}

// Passed reports whether the run is a pass: no case failed.
func (r *Report) Passed() bool { return r.Summary.Fail == 0 }

// Case returns the case with id, or nil.
func (r *Report) Case(id string) *Case {
	for i := range r.Cases {
		if r.Cases[i].ID == id {
			return &r.Cases[i]
		}
	}
	return nil
}

// ParseReport reads the kit's report and checks it is one: the kit's name,
// each case named by a normative rule, a known status, and a summary that
// counts the cases.
func ParseReport(data []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("conform: the report is not JSON: %w", err)
	}
	if r.Kit != AppKey {
		return nil, fmt.Errorf("conform: the page's report is not the kit's (kit %q)", r.Kit)
	}
	var errs []error
	var n Summary
	for _, c := range r.Cases {
		if RuleTitle(c.Rule) == "" {
			errs = append(errs, fmt.Errorf("case %s names rule %q, which rules.json does not define", c.ID, c.Rule))
		}
		switch c.Status {
		case Pass:
			n.Pass++
		case Fail:
			n.Fail++
		case Skip:
			n.Skip++
		default:
			errs = append(errs, fmt.Errorf("case %s has status %q", c.ID, c.Status))
		}
	}
	if n != r.Summary {
		errs = append(errs, fmt.Errorf("the summary %+v does not count the cases (%+v)", r.Summary, n))
	}
	if len(r.Cases) == 0 {
		errs = append(errs, errors.New("the report has no cases"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("conform: invalid report: %w", err)
	}
	return &r, nil
}

// RuleTitle is the normative rule's one-line title, "" for an unknown id.
func RuleTitle(id string) string {
	for _, nr := range frame.NormativeRules {
		if nr.ID == id {
			return nr.Title
		}
	}
	return ""
}

// WriteTable prints the report as a table: one line per case with its rule,
// result and, for a failure or a skip, the reason; then the summary.
func WriteTable(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tRULE\tRESULT\tDETAIL")
	for _, c := range r.Cases {
		rule := c.Rule
		if c.Check != "" {
			rule += " " + c.Check
		}
		detail := ""
		switch c.Status {
		case Fail:
			detail = c.Reason + " (expected: " + c.Expected + "; got: " + c.Got + ")"
		case Skip:
			detail = c.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, rule, c.Status, oneLine(detail))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	host := "unknown host"
	if r.Host != nil {
		host = "transport " + r.Host.Transport
	}
	_, err := fmt.Fprintf(w, "%d cases: %d pass, %d fail, %d skip (%s, %d ms)\n", len(r.Cases), r.Summary.Pass, r.Summary.Fail, r.Summary.Skip, host, r.MS)
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
