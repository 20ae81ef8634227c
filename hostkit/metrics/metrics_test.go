package metrics_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/metrics"
)

// labelValues are the values label takes in family name's series.
func labelValues(t *testing.T, m *metrics.Metrics, name, label string) map[string]bool {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.Metric {
			for _, l := range s.Label {
				if l.GetName() == label {
					out[l.GetValue()] = true
				}
			}
		}
	}
	return out
}

// The app label is bounded: past MaxApps keys every app counts as
// OtherApp, and a key that is no installed app's name (control
// characters, over-long) never becomes a label.
func TestAppLabelIsBounded(t *testing.T) {
	m := metrics.New()
	for i := range metrics.MaxApps + 50 {
		m.App(fmt.Sprintf("app-%d", i)).Request(frame.TypeDBRequest)
	}
	m.App("evil\nkey").Request(frame.TypeDBRequest)
	apps := labelValues(t, m, "snug_requests_total", "app")
	if len(apps) != metrics.MaxApps+1 || !apps[metrics.OtherApp] {
		t.Fatalf("%d app label values (other: %v), want %d and %q", len(apps), apps[metrics.OtherApp], metrics.MaxApps+1, metrics.OtherApp)
	}
	if apps["evil\nkey"] || apps[fmt.Sprintf("app-%d", metrics.MaxApps)] {
		t.Fatal("a key past the bound, or with a control character, is a label value")
	}
}

// An error code outside the protocol's registry is counted as OtherApp:
// the code label has the registry's values only.
func TestErrorCodeIsBounded(t *testing.T) {
	m := metrics.New()
	a := m.App("hello")
	a.Error(frame.TypeDBResponse, frame.CodeDBSQLError)
	a.Error(frame.TypeDBResponse, "user-chosen text")
	m.NetDecision("maybe", "ALSO_NOT_A_CODE")
	codes := labelValues(t, m, "snug_request_errors_total", "code")
	if len(codes) != 2 || !codes[frame.CodeDBSQLError] || !codes[metrics.OtherApp] {
		t.Fatalf("code label values %v, want %s and %s", codes, frame.CodeDBSQLError, metrics.OtherApp)
	}
	if d := labelValues(t, m, "snug_net_decisions_total", "decision"); !d[metrics.OtherApp] || len(d) != 1 {
		t.Fatalf("decision label values %v, want only %s", d, metrics.OtherApp)
	}
}

// Every hook is a no-op on a nil *Metrics: a broker or a cluster without
// metrics calls them all the same.
func TestNilMetricsIsSafe(t *testing.T) {
	var m *metrics.Metrics
	a := m.App("hello")
	a.Request(frame.TypeDBRequest)
	a.Error(frame.TypeDBResponse, frame.CodeDBSQLError)
	a.Refused(frame.TypeOpenURLResult)
	m.SessionOpened()
	m.SessionClosed()
	m.NetDecision("allowed", "")
	m.AgentDone(time.Second, false)
	m.LeaseTaken(true)
	m.LeaseLost()
	m.LeaseRenewal(nil)
	m.LeasesHeldFunc(func() int { return 1 })
	m.Forwarded(nil)
	m.Acknowledged(time.Millisecond)
	m.Restored(time.Second, nil)
	m.ObjectStore("put", nil)
}
