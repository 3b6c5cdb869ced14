// Package prommetrics owns adapterkit's Prometheus metrics: their names, help texts
// and label bounds, and a collector that reads, at each scrape, a [Snapshot] of the
// adapters' [Figures] (calls by method and code, latency histogram, restarts, memory
// and CPU time of each process tree) and, for a daemon, the daemon's own figures
// (clients, cleanups, the start-up sweep).
//
// It is shared by two layers: registry/promcollector (the public entry point,
// ForRegistry) and adapterctl serve, which feeds the same collector from its
// control-plane daemon; only the module's top-level internal/ is visible to both. So
// it sits in the shared layer and imports nothing above it: its input is [Figures], in
// types of its own, which each of the two fills from a lifecycle.Stats (lifecycle is
// a higher layer). Only packages that import it link the Prometheus client.
//
// Label values are bounded: adapter names come from the host's adapters, method names
// only from the catalogs the adapters serve now (the calls of any other method name,
// which a caller may invent or an earlier catalog advertised, are counted under
// method="(other)"), at most [MaxMethodLabels] of them per adapter and none longer
// than [MaxLabelLen] bytes, codes from the eight protocol error codes plus "ok". What
// the collector remembers between scrapes is bounded the same way: the method labels
// of each adapter still reported, nothing of an adapter no longer reported.
package prommetrics

import (
	goruntime "runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/wire"
)

// OtherMethod is the method label of calls to methods no catalog of the adapter
// advertised.
const OtherMethod = "(other)"

// MaxMethodLabels bounds the method labels of one adapter: the methods called beyond
// them (in the order of their names) are counted under "(other)".
const MaxMethodLabels = 128

// MaxLabelLen bounds a method label: a method whose name is longer is counted under
// "(other)".
const MaxLabelLen = 128

// codeOK is the code label of successful calls.
const codeOK = "ok"

// Buckets are the upper bounds of adapterkit_call_duration_seconds: powers of two of
// microseconds from 32 µs to about 33.6 s (a call's round trip on one machine is
// 50-100 µs; the protocol's default call deadline is 30 s). Each is a bound of the
// histogram package lifecycle keeps, so every bucket's count is exact.
var Buckets = func() []float64 {
	var b []float64
	for k := 5; k <= 25; k++ {
		b = append(b, (time.Duration(1<<k) * time.Microsecond).Seconds())
	}
	return b
}()

// Adapter is one adapter's figures at a scrape.
type Adapter struct {
	// Name is the adapter label. Adapters of one name (e.g. two versions open at once)
	// are reported together: their figures are added up.
	Name string
	// Version is the version label of adapterkit_adapter_up ("" when not known).
	Version string
	// Up: an adapter process is running and connected.
	Up bool
	// Methods are the methods of the adapter's current catalog, nil when none is known
	// (e.g. while it restarts). A method called that no catalog of the adapters of this
	// name advertises is labelled "(other)"; while none of them knows its catalog, the
	// labels of the last scrape that knew one are kept.
	Methods map[string]bool
	// Figures are the adapter's figures.
	Figures Figures
}

// Figures are what the collector reads of one adapter's snapshot (a lifecycle.Stats,
// field for field: the caller copies them).
type Figures struct {
	// Methods are the figures of each method called.
	Methods []MethodFigures
	// InFlight is the number of calls under way.
	InFlight int64
	// Restarts, Violations and LimitHits count restart attempts, connections ended for
	// breaking the protocol, and process trees stopped at a resource limit.
	Restarts              int
	Violations, LimitHits uint64
	// Starts and FailedStarts count the processes started and the starts that failed
	// (lifecycle.BackoffStats); StartFailures is the failed starts in a row (0: the last
	// start succeeded).
	Starts, FailedStarts uint64
	StartFailures        int
	// Abandoned is the slots held by calls whose callers gave up (lifecycle.Stats).
	Abandoned int
	// Running: a process runs (lifecycle.Stats.Pid is not 0). Memory and CPU time are
	// reported only then.
	Running bool
	// MemoryBytes and CPU are the process tree's memory and CPU time, where HasMemory
	// and HasCPU say the platform told them (platform.Usage).
	MemoryBytes       int64
	CPU               time.Duration
	HasMemory, HasCPU bool
}

// MethodFigures are one method's figures (a lifecycle.MethodStats, field for field).
type MethodFigures struct {
	Method string
	// Calls counts the calls that returned; Errors those that failed, by code, of which
	// CallerErrors were the caller's doing; Uncertain those whose outcome is unknown.
	Calls                uint64
	Errors, CallerErrors map[wire.Code]uint64
	Uncertain            uint64
	// Count and Sum are the latency histogram's count and total duration, Latency the
	// histogram (nil: no call observed).
	Count   uint64
	Sum     time.Duration
	Latency Histogram
}

// Histogram is a latency histogram: how many calls took less than d (exact at the
// bounds of [Buckets]). *lifecycle.Latency is one.
type Histogram interface {
	CountUnder(d time.Duration) uint64
}

// Daemon is a control-plane daemon's own figures at a scrape.
type Daemon struct {
	// Version is the daemon's version (build info); "" reports "devel".
	Version string
	// Clients is the number of connected clients.
	Clients int
	// Refused and Dropped count the clients refused at connect and those dropped
	// for not reading their answers, by transport ("unix", "tcp").
	Refused, Dropped map[string]uint64
	// UnverifiedCleanups is the number of process trees not proven gone.
	UnverifiedCleanups int
	// Exits counts the adapters that ended on their own.
	Exits uint64
	// Swept and SweepFailed are the trees the start-up sweep ended and those it could
	// not; SweepError says the sweep itself failed.
	Swept, SweepFailed int
	SweepError         bool
	// StateSaveFailures counts the failed saves of the record of refused adapter
	// files; StateUnsaved says the record is held in memory only.
	StateSaveFailures uint64
	StateUnsaved      bool
	// CertNotAfter is when the daemon's TLS certificate expires (zero: no TCP listener).
	CertNotAfter time.Time
	// CertReloads counts the certificate reloads.
	CertReloads uint64
}

// Snapshot is what one scrape reports.
type Snapshot struct {
	Adapters []Adapter
	// Daemon is nil for a host that is not a daemon: no daemon metrics are reported.
	Daemon *Daemon
}

// Collector is a [prometheus.Collector] of adapterkit's figures. It is safe for
// concurrent use.
type Collector struct {
	snapshot func() Snapshot

	mu sync.Mutex
	// labels holds, by adapter name, the method labels of the last scrape that knew a
	// catalog of it: at most MaxMethodLabels names of at most MaxLabelLen bytes, and
	// only for the names of the last scrape.
	labels map[string]map[string]bool
}

// New returns a Collector that calls snapshot at each scrape; snapshot must be safe
// to call from any goroutine.
func New(snapshot func() Snapshot) *Collector {
	return &Collector{snapshot: snapshot, labels: make(map[string]map[string]bool)}
}

// CatalogMethods returns the set of methods a catalog advertises (the Methods of an
// [Adapter]); nil for a nil catalog.
func CatalogMethods(cat *wire.Catalog) map[string]bool {
	if cat == nil {
		return nil
	}
	out := make(map[string]bool)
	for _, svc := range cat.Services {
		for _, m := range svc.Methods {
			out[m] = true
		}
	}
	return out
}

const ns = "adapterkit"

var (
	descCalls = prometheus.NewDesc(ns+"_calls_total",
		"Calls that returned, by adapter, method and outcome (ok or the protocol error code).",
		[]string{"adapter", "method", "code"}, nil)
	descCallerErrors = prometheus.NewDesc(ns+"_calls_caller_errors_total",
		"Failed calls that were the caller's doing, by code: a method the adapter does not advertise, params refused before sending, "+
			"the caller's own deadline or cancellation (also counted in adapterkit_calls_total).",
		[]string{"adapter", "method", "code"}, nil)
	descUncertain = prometheus.NewDesc(ns+"_calls_uncertain_total",
		"Failed calls whose outcome is unknown: sent, no reply (also counted in adapterkit_calls_total).",
		[]string{"adapter", "method"}, nil)
	descInFlight = prometheus.NewDesc(ns+"_calls_in_flight",
		"Calls under way.", []string{"adapter"}, nil)
	descDuration = prometheus.NewDesc(ns+"_call_duration_seconds",
		"Duration of the calls that returned, successes and errors.",
		[]string{"adapter", "method"}, nil)
	descMemory = prometheus.NewDesc(ns+"_adapter_memory_bytes",
		"Current memory of the adapter's whole process tree (where the platform can say).",
		[]string{"adapter"}, nil)
	descCPU = prometheus.NewDesc(ns+"_adapter_cpu_seconds_total",
		"CPU time of the adapter's current process tree (where the platform can say; starts again at a restart).",
		[]string{"adapter"}, nil)
	descRestarts = prometheus.NewDesc(ns+"_adapter_restarts_total",
		"Restart attempts of the adapter.", []string{"adapter"}, nil)
	descViolations = prometheus.NewDesc(ns+"_adapter_violations_total",
		"Connections the adapter ended by breaking the protocol.", []string{"adapter"}, nil)
	descLimitHits = prometheus.NewDesc(ns+"_adapter_limit_hits_total",
		"Process trees the kernel stopped at a resource limit.", []string{"adapter"}, nil)
	descStarts = prometheus.NewDesc(ns+"_adapter_starts_total",
		"Adapter processes started, restarts included.", []string{"adapter"}, nil)
	descFailedStarts = prometheus.NewDesc(ns+"_adapter_start_failures_total",
		"Starts that failed: the start itself, or an end before the adapter served a call or ran for the reset time.",
		[]string{"adapter"}, nil)
	descBackoff = prometheus.NewDesc(ns+"_adapter_consecutive_start_failures",
		"Failed starts in a row (the start backoff's step); 0 once a start succeeded.", []string{"adapter"}, nil)
	descAbandoned = prometheus.NewDesc(ns+"_adapter_abandoned_calls",
		"In-flight slots held by calls whose callers gave up and whose replies are still awaited.", []string{"adapter"}, nil)
	descUp = prometheus.NewDesc(ns+"_adapter_up",
		"1 when an adapter process is running and connected, 0 while it restarts or after it gave up.",
		[]string{"adapter", "version"}, nil)

	descBuild = prometheus.NewDesc(ns+"_build_info",
		"The daemon's version and Go version (always 1).", []string{"version", "goversion"}, nil)
	descClients = prometheus.NewDesc(ns+"_daemon_clients",
		"Clients connected to the daemon.", nil, nil)
	descRefused = prometheus.NewDesc(ns+"_daemon_refused_clients_total",
		"Clients refused at connect (wrong user, unknown certificate, too many clients).", []string{"transport"}, nil)
	descDropped = prometheus.NewDesc(ns+"_daemon_dropped_clients_total",
		"Clients dropped for not reading their answers.", []string{"transport"}, nil)
	descUnverified = prometheus.NewDesc(ns+"_daemon_unverified_cleanups",
		"Adapter process trees not proven gone (their package directories stay reserved).", nil, nil)
	descExits = prometheus.NewDesc(ns+"_daemon_adapter_exits_total",
		"Adapters that ended on their own (not closed by the daemon).", nil, nil)
	descSweep = prometheus.NewDesc(ns+"_daemon_sweep_trees",
		"Process trees left by a crashed predecessor that the start-up sweep ended (swept) or could not (failed).",
		[]string{"result"}, nil)
	descSweepError = prometheus.NewDesc(ns+"_daemon_sweep_error",
		"1 when the start-up sweep itself failed.", nil, nil)
	descStateSaveFailures = prometheus.NewDesc(ns+"_daemon_state_save_failures_total",
		"Failed saves of the record of refused adapter files into the state directory.", nil, nil)
	descStateUnsaved = prometheus.NewDesc(ns+"_daemon_state_unsaved",
		"1 while the record of refused adapter files is held in memory only (its save failed; retried).", nil, nil)
	descCertNotAfter = prometheus.NewDesc(ns+"_daemon_tls_cert_not_after_timestamp_seconds",
		"When the daemon's TLS certificate expires (Unix time).", nil, nil)
	descCertReloads = prometheus.NewDesc(ns+"_daemon_tls_cert_reloads_total",
		"Successful reloads of the daemon's certificate files.", nil, nil)
)

// Describe sends the descriptions of every metric the collector may report.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCalls, descCallerErrors, descUncertain, descInFlight, descDuration, descMemory, descCPU,
		descRestarts, descViolations, descLimitHits, descStarts, descFailedStarts, descBackoff, descAbandoned, descUp, descBuild, descClients, descRefused, descDropped,
		descUnverified, descExits, descSweep, descSweepError, descStateSaveFailures, descStateUnsaved, descCertNotAfter, descCertReloads} {
		ch <- d
	}
}

// methodFigures are one (adapter, method) pair's figures, added up over the adapters
// of that name and the methods labelled "(other)".
type methodFigures struct {
	codes     map[string]uint64
	caller    map[string]uint64 // the codes' failures that were the caller's doing
	uncertain uint64
	count     uint64
	sum       float64
	buckets   []uint64 // cumulative, one per bound of Buckets
}

// adapterFigures are one adapter name's figures, added up.
type adapterFigures struct {
	methods            map[string]*methodFigures
	inFlight           int64
	memory, cpu        float64
	hasMemory, hasCPU  bool
	restarts           int
	violations, limits uint64
	starts, failed     uint64
	backoff, abandoned int
	up                 map[string]bool // version -> up
}

// Collect reads a snapshot and sends its metrics.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	snap := c.snapshot()
	group := make(map[string][]*Adapter)
	for i := range snap.Adapters {
		a := &snap.Adapters[i]
		group[a.Name] = append(group[a.Name], a)
	}
	names := make([]string, 0, len(group))
	for n := range group {
		names = append(names, n)
	}
	sort.Strings(names)
	byName := make(map[string]*adapterFigures, len(group))
	labels := c.methodLabels(group)
	for _, name := range names {
		f := &adapterFigures{methods: make(map[string]*methodFigures), up: make(map[string]bool)}
		byName[name] = f
		for _, a := range group[name] {
			add(f, a, labels[name])
		}
	}
	for _, name := range names {
		f := byName[name]
		for method, m := range f.methods {
			for code, n := range m.codes {
				ch <- prometheus.MustNewConstMetric(descCalls, prometheus.CounterValue, float64(n), name, method, code)
				if code != codeOK {
					ch <- prometheus.MustNewConstMetric(descCallerErrors, prometheus.CounterValue, float64(m.caller[code]), name, method, code)
				}
			}
			ch <- prometheus.MustNewConstMetric(descUncertain, prometheus.CounterValue, float64(m.uncertain), name, method)
			bk := make(map[float64]uint64, len(Buckets))
			for i, le := range Buckets {
				bk[le] = m.buckets[i]
			}
			ch <- prometheus.MustNewConstHistogram(descDuration, m.count, m.sum, bk, name, method)
		}
		ch <- prometheus.MustNewConstMetric(descInFlight, prometheus.GaugeValue, float64(f.inFlight), name)
		if f.hasMemory {
			ch <- prometheus.MustNewConstMetric(descMemory, prometheus.GaugeValue, f.memory, name)
		}
		if f.hasCPU {
			ch <- prometheus.MustNewConstMetric(descCPU, prometheus.CounterValue, f.cpu, name)
		}
		ch <- prometheus.MustNewConstMetric(descRestarts, prometheus.CounterValue, float64(f.restarts), name)
		ch <- prometheus.MustNewConstMetric(descViolations, prometheus.CounterValue, float64(f.violations), name)
		ch <- prometheus.MustNewConstMetric(descLimitHits, prometheus.CounterValue, float64(f.limits), name)
		ch <- prometheus.MustNewConstMetric(descStarts, prometheus.CounterValue, float64(f.starts), name)
		ch <- prometheus.MustNewConstMetric(descFailedStarts, prometheus.CounterValue, float64(f.failed), name)
		ch <- prometheus.MustNewConstMetric(descBackoff, prometheus.GaugeValue, float64(f.backoff), name)
		ch <- prometheus.MustNewConstMetric(descAbandoned, prometheus.GaugeValue, float64(f.abandoned), name)
		for v, up := range f.up {
			ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, b2f(up), name, v)
		}
	}
	if d := snap.Daemon; d != nil {
		collectDaemon(ch, d)
	}
}

// add adds one adapter's snapshot to the figures of its name, labelled with labels.
func add(f *adapterFigures, a *Adapter, labels map[string]bool) {
	st := &a.Figures
	for _, ms := range st.Methods {
		method := ms.Method
		if !labels[method] {
			method = OtherMethod
		}
		m := f.methods[method]
		if m == nil {
			m = &methodFigures{codes: map[string]uint64{codeOK: 0}, caller: map[string]uint64{}, buckets: make([]uint64, len(Buckets))}
			for _, code := range proto.Codes {
				m.codes[string(code)] = 0
			}
			f.methods[method] = m
		}
		ok := ms.Calls
		for code, n := range ms.Errors {
			m.codes[string(code)] += n
			ok -= n
		}
		m.codes[codeOK] += ok
		for code, n := range ms.CallerErrors {
			m.caller[string(code)] += n
		}
		m.uncertain += ms.Uncertain
		m.count += ms.Count
		m.sum += ms.Sum.Seconds()
		if ms.Latency != nil {
			for i, le := range Buckets {
				m.buckets[i] += ms.Latency.CountUnder(time.Duration(le * float64(time.Second)))
			}
		}
	}
	f.inFlight += st.InFlight
	if st.Running {
		if st.HasMemory {
			f.memory += float64(st.MemoryBytes)
			f.hasMemory = true
		}
		if st.HasCPU {
			f.cpu += st.CPU.Seconds()
			f.hasCPU = true
		}
	}
	f.restarts += st.Restarts
	f.violations += st.Violations
	f.limits += st.LimitHits
	f.starts += st.Starts
	f.failed += st.FailedStarts
	f.backoff = max(f.backoff, st.StartFailures)
	f.abandoned += st.Abandoned
	f.up[a.Version] = f.up[a.Version] || a.Up
}

// methodLabels returns, by adapter name, the methods called that get a label of their
// own, and remembers them in place of what it remembered: the names of group only.
func (c *Collector) methodLabels(group map[string][]*Adapter) map[string]map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := make(map[string]map[string]bool, len(group))
	for name, as := range group {
		var cats []map[string]bool
		var called []string
		for _, a := range as {
			if a.Methods != nil {
				cats = append(cats, a.Methods)
			}
			for _, ms := range a.Figures.Methods {
				called = append(called, ms.Method)
			}
		}
		if cats == nil {
			// No catalog known now (restarting): the last labels stay, so that a
			// method's calls do not move to "(other)" and back.
			if prev, ok := c.labels[name]; ok {
				next[name] = prev
			}
			continue
		}
		slices.Sort(called)
		labels := make(map[string]bool)
		for _, m := range slices.Compact(called) {
			if len(labels) == MaxMethodLabels {
				break
			}
			if len(m) <= MaxLabelLen && m != OtherMethod && inAny(cats, m) {
				labels[m] = true
			}
		}
		next[name] = labels
	}
	c.labels = next
	return next
}

func inAny(sets []map[string]bool, k string) bool {
	for _, s := range sets {
		if s[k] {
			return true
		}
	}
	return false
}

func collectDaemon(ch chan<- prometheus.Metric, d *Daemon) {
	v := d.Version
	if v == "" {
		v = "devel"
	}
	ch <- prometheus.MustNewConstMetric(descBuild, prometheus.GaugeValue, 1, v, goruntime.Version())
	ch <- prometheus.MustNewConstMetric(descClients, prometheus.GaugeValue, float64(d.Clients))
	for _, tr := range []string{"unix", "tcp"} {
		if n, ok := d.Refused[tr]; ok {
			ch <- prometheus.MustNewConstMetric(descRefused, prometheus.CounterValue, float64(n), tr)
		}
		if n, ok := d.Dropped[tr]; ok {
			ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(n), tr)
		}
	}
	ch <- prometheus.MustNewConstMetric(descUnverified, prometheus.GaugeValue, float64(d.UnverifiedCleanups))
	ch <- prometheus.MustNewConstMetric(descExits, prometheus.CounterValue, float64(d.Exits))
	ch <- prometheus.MustNewConstMetric(descSweep, prometheus.GaugeValue, float64(d.Swept), "swept")
	ch <- prometheus.MustNewConstMetric(descSweep, prometheus.GaugeValue, float64(d.SweepFailed), "failed")
	ch <- prometheus.MustNewConstMetric(descSweepError, prometheus.GaugeValue, b2f(d.SweepError))
	ch <- prometheus.MustNewConstMetric(descStateSaveFailures, prometheus.CounterValue, float64(d.StateSaveFailures))
	ch <- prometheus.MustNewConstMetric(descStateUnsaved, prometheus.GaugeValue, b2f(d.StateUnsaved))
	if !d.CertNotAfter.IsZero() {
		ch <- prometheus.MustNewConstMetric(descCertNotAfter, prometheus.GaugeValue, float64(d.CertNotAfter.Unix()))
		ch <- prometheus.MustNewConstMetric(descCertReloads, prometheus.CounterValue, float64(d.CertReloads))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
