// Package metrics is the host kit's instrumentation: one Metrics per host,
// holding Prometheus collectors (github.com/prometheus/client_golang) on a
// registry of its own, and the hooks the other packages call — the broker
// for each request and each error answer, the agent bridge for each agent
// request's latency, the net gate's audit for each decision, and replicated
// mode (hostkit/cluster) for leases, forwards, acknowledgements, restores
// and object-store requests. Handler serves the registry in the Prometheus
// text format at /metrics.
//
// Every hook is safe on a nil *Metrics (it does nothing), so a package
// built without a host (a test, a tool) pays nothing. The hot paths pay a
// counter increment: a session resolves its app's counters once (App) and
// adds to them per request without a map lookup or a lock.
//
// Labels never carry user data: no user id, no URL, no SQL, no request id.
// The app label is the installed app's key (the name the host installed it
// under), bounded to MaxApps distinct values (the rest count as "_other");
// error codes are the protocol's registry (any other is "_other"); every
// other label has a fixed set of values.
//
// Its limit: it counts and times what the hooks report. It decides nothing
// and keeps no per-request state.
package metrics

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"github.com/snuggen/snuggen/frame"
)

// MaxApps bounds the app label's values: the first MaxApps app keys seen
// get their own series, later ones share OtherApp.
const MaxApps = 256

// OtherApp is the app label of the apps past MaxApps, and the code label of
// an error code the protocol's registry does not have.
const OtherApp = "_other"

// Kinds are the request kinds the broker counts, one per app→host request
// frame: the kind label's values.
var Kinds = []string{"agent", "db", "net", "open-url", "save-file"}

// KindOf is the kind of a request frame type or of its answer's type
// ("snug:db-request" and "snug:db-response" are "db"), or "" for a frame
// that is neither.
func KindOf(frameType string) string {
	switch frameType {
	case frame.TypeAppMessage, frame.TypeAppResponse:
		return "agent"
	case frame.TypeDBRequest, frame.TypeDBResponse:
		return "db"
	case frame.TypeNetRequest, frame.TypeNetResponse:
		return "net"
	case frame.TypeOpenURLRequest, frame.TypeOpenURLResult:
		return "open-url"
	case frame.TypeSaveFileRequest, frame.TypeSaveFileResult:
		return "save-file"
	}
	return ""
}

func kindIndex(kind string) int {
	for i, k := range Kinds {
		if k == kind {
			return i
		}
	}
	return -1
}

// Metrics is one host's instruments. Its methods are safe for concurrent
// use, and on a nil *Metrics.
type Metrics struct {
	reg *prometheus.Registry

	requests *prometheus.CounterVec // app, kind
	errors   *prometheus.CounterVec // app, kind, code
	net      *prometheus.CounterVec // decision, code
	agent    *prometheus.HistogramVec
	sessions prometheus.Gauge

	leasesHeldFn  atomic.Pointer[func() int]
	leasesTaken   *prometheus.CounterVec // how
	leasesLost    prometheus.Counter
	leaseRenewals *prometheus.CounterVec // outcome
	forwards      *prometheus.CounterVec // outcome
	ack           prometheus.Histogram
	restores      *prometheus.CounterVec // outcome
	restoreTime   prometheus.Histogram
	objRequests   *prometheus.CounterVec // op
	objErrors     *prometheus.CounterVec // op

	mu   sync.Mutex
	apps map[string]*App
}

// New returns a Metrics whose registry also has the Go runtime's and the
// process's collectors.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := factory{reg}
	m := &Metrics{reg: reg, apps: map[string]*App{}}
	m.requests = f.counters("snug_requests_total", "Requests an app sent the host, by installed app and kind (agent, db, net, open-url, save-file).", "app", "kind")
	m.errors = f.counters("snug_request_errors_total", "Requests answered with an error, by installed app, kind and the protocol's error code.", "app", "kind", "code")
	m.net = f.counters("snug_net_decisions_total", "The net gate's decisions: allowed (an answer came back), refused (a rule said no) or failed (the network or the upstream did), with the error code.", "decision", "code")
	m.agent = f.histograms("snug_agent_request_seconds", "Time from an agent request to its answer, by outcome (ok or error).", agentBuckets, "outcome")
	m.sessions = f.gauge("snug_instances", "App instances (iframes) the broker holds open.")
	f.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "snug_cluster_leases_held", Help: "Databases this replica owns (leases held and serving)."}, func() float64 {
		if n := m.leasesHeldFn.Load(); n != nil {
			return float64((*n)())
		}
		return 0
	}))
	m.leasesTaken = f.counters("snug_cluster_leases_taken_total", "Leases this replica took: of a free database (free) or over from another replica whose lease had expired (takeover).", "how")
	m.leasesLost = f.counter("snug_cluster_leases_lost_total", "Leases this replica lost to another replica while it held them.")
	m.leaseRenewals = f.counters("snug_cluster_lease_renewals_total", "Lease renewal rounds, by outcome (ok or error).", "outcome")
	m.forwards = f.counters("snug_cluster_forwards_total", "Requests forwarded to the replica that owns the database, by outcome (ok, error).", "outcome")
	m.ack = f.histogram("snug_cluster_ack_seconds", "Time from a write's commit to its acknowledgement (uploaded and the lease still held).", ackBuckets)
	m.restores = f.counters("snug_cluster_restores_total", "Databases restored from the object store when this replica took their lease, by outcome (ok, error).", "outcome")
	m.restoreTime = f.histogram("snug_cluster_restore_seconds", "Time a restore from the object store took.", restoreBuckets)
	m.objRequests = f.counters("snug_objstore_requests_total", "Object-store calls, by operation (list, get, put, delete, init).", "op")
	m.objErrors = f.counters("snug_objstore_errors_total", "Object-store calls that failed, by operation.", "op")
	return m
}

var (
	agentBuckets   = []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}
	ackBuckets     = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}
	restoreBuckets = []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
)

// factory registers each collector as it makes it.
type factory struct{ reg *prometheus.Registry }

func (f factory) counters(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	return c
}

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.reg.MustRegister(c)
	return c
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	f.reg.MustRegister(g)
	return g
}

func (f factory) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	f.reg.MustRegister(h)
	return h
}

func (f factory) histograms(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	f.reg.MustRegister(h)
	return h
}

// Registry is the registry the collectors are on, for a host that serves
// or gathers it itself.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics (GET /metrics) in the format the scraper asks
// for, the Prometheus text format by default. It is the registry's Gather
// and expfmt's encoder: promhttp's handler would do the same, but its
// package's tests need a module (go-spew) that a host module made by
// snuggen new host then has to fetch before go mod tidy can finish.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		families, err := m.reg.Gather()
		if err != nil {
			http.Error(w, "metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		format := expfmt.Negotiate(r.Header)
		w.Header().Set("Content-Type", string(format))
		enc := expfmt.NewEncoder(w, format)
		for _, mf := range families {
			if err := enc.Encode(mf); err != nil {
				return // the scraper went away
			}
		}
	})
}

// App is one installed app's request counters, resolved once: a broker
// session holds its app's and adds to them per request.
type App struct {
	m        *Metrics
	name     string
	requests [5]prometheus.Counter // by kindIndex
}

// App returns the counters of the app installed as key (OtherApp's past
// MaxApps distinct keys). It returns nil on a nil Metrics; App's methods
// are safe on nil.
func (m *Metrics) App(key string) *App {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if a := m.apps[key]; a != nil {
		return a
	}
	name := key
	if len(m.apps) >= MaxApps || !labelSafe(key) {
		name = OtherApp
		if a := m.apps[name]; a != nil {
			return a
		}
	}
	a := &App{m: m, name: name}
	for i, k := range Kinds {
		a.requests[i] = m.requests.WithLabelValues(name, k)
	}
	m.apps[name] = a
	return a
}

// labelSafe reports whether an app key may be a label value as it is: an
// installed app's key is a short name; anything longer or with control
// characters is not one to keep a series for.
func labelSafe(key string) bool {
	return key != "" && len(key) <= 128 && !strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// Request counts one request of the frame type typ.
func (a *App) Request(typ string) {
	if a == nil {
		return
	}
	if i := kindIndex(KindOf(typ)); i >= 0 {
		a.requests[i].Inc()
	}
}

// Error counts one error answer of the answer (or request) type typ with
// the protocol's code.
func (a *App) Error(typ, code string) {
	if a == nil {
		return
	}
	kind := KindOf(typ)
	if kind == "" {
		return
	}
	if !frame.Known(code) {
		code = OtherApp
	}
	a.m.errors.WithLabelValues(a.name, kind, code).Inc()
}

// SessionOpened and SessionClosed keep the instances gauge.
func (m *Metrics) SessionOpened() {
	if m != nil {
		m.sessions.Inc()
	}
}

// SessionClosed is SessionOpened's pair.
func (m *Metrics) SessionClosed() {
	if m != nil {
		m.sessions.Dec()
	}
}

// NetDecision counts one decision of the net gate: decision is its audit
// entry's ("allowed", "refused", "failed"), code the error code (empty when
// allowed).
func (m *Metrics) NetDecision(decision, code string) {
	if m == nil {
		return
	}
	switch decision {
	case "allowed", "refused", "failed":
	default:
		decision = OtherApp
	}
	if code != "" && !frame.Known(code) {
		code = OtherApp
	}
	m.net.WithLabelValues(decision, code).Inc()
}

// AgentDone records one agent request's latency; failed is whether it was
// answered with an error.
func (m *Metrics) AgentDone(elapsed time.Duration, failed bool) {
	if m == nil {
		return
	}
	outcome := "ok"
	if failed {
		outcome = "error"
	}
	m.agent.WithLabelValues(outcome).Observe(elapsed.Seconds())
}

// Refused counts one answer of typ (open-url-result, save-file-result)
// that refuses by its status: its code label is "refused".
func (a *App) Refused(typ string) {
	if a == nil {
		return
	}
	if kind := KindOf(typ); kind != "" {
		a.m.errors.WithLabelValues(a.name, kind, "refused").Inc()
	}
}
