package metrics

import "time"

// The hooks of replicated mode (hostkit/cluster).

// LeaseTaken counts a lease this replica took; takeover is whether another
// replica held it before (its lease had expired) rather than nobody.
func (m *Metrics) LeaseTaken(takeover bool) {
	if m == nil {
		return
	}
	how := "free"
	if takeover {
		how = "takeover"
	}
	m.leasesTaken.WithLabelValues(how).Inc()
}

// LeaseLost counts a lease another replica took from this one.
func (m *Metrics) LeaseLost() {
	if m != nil {
		m.leasesLost.Inc()
	}
}

// LeaseRenewal counts one renewal round of this replica's leases.
func (m *Metrics) LeaseRenewal(err error) {
	if m != nil {
		m.leaseRenewals.WithLabelValues(outcome(err)).Inc()
	}
}

// Forwarded counts one request forwarded to the database's owner.
func (m *Metrics) Forwarded(err error) {
	if m != nil {
		m.forwards.WithLabelValues(outcome(err)).Inc()
	}
}

// Acknowledged records how long a write waited from its commit to its
// acknowledgement.
func (m *Metrics) Acknowledged(elapsed time.Duration) {
	if m != nil {
		m.ack.Observe(elapsed.Seconds())
	}
}

// Restored records one restore from the object store and its time.
func (m *Metrics) Restored(elapsed time.Duration, err error) {
	if m == nil {
		return
	}
	m.restores.WithLabelValues(outcome(err)).Inc()
	if err == nil {
		m.restoreTime.Observe(elapsed.Seconds())
	}
}

// ObjectStoreOps are the op label's values of the object-store counters.
var ObjectStoreOps = []string{"init", "list", "get", "put", "delete"}

// ObjectStore counts one object-store call of op (one of ObjectStoreOps)
// and, when err is not nil, its failure.
func (m *Metrics) ObjectStore(op string, err error) {
	if m == nil {
		return
	}
	m.objRequests.WithLabelValues(op).Inc()
	if err != nil {
		m.objErrors.WithLabelValues(op).Inc()
	}
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// LeasesHeldFunc makes the leases-held gauge read n at each scrape (a
// replica counts the databases it owns).
func (m *Metrics) LeasesHeldFunc(n func() int) {
	if m != nil {
		m.leasesHeldFn.Store(&n)
	}
}
