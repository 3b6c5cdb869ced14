// Package promcollector exports the figures of a registry's adapters as Prometheus
// metrics: [ForRegistry] returns a [prometheus.Collector] that reads, at each
// scrape, what the registry already keeps of its adapters (lifecycle.Stats: calls by
// method and code, latency histogram, restarts, memory and CPU time of each process
// tree).
//
// It is in the registry's layer: it imports registry, discovery and lifecycle, and
// fills the shared collector of internal/prommetrics, which adapterctl serve feeds too,
// with each adapter's figures.
//
// The collector costs nothing on the call path: calls are counted by package
// lifecycle whether or not anything exports them, and the collector only converts a
// snapshot when Prometheus scrapes. It lives in its own package so that hosts that do
// not export metrics do not link the Prometheus client. adapterctl serve reports the
// same metrics and its own (see docs/operations.md for the metrics).
//
// Label values are bounded: adapter names come from the host's adapters, method names
// only from the catalogs the adapters serve now, at most 128 per adapter and none
// longer than 128 bytes (the calls of any other method name, which a caller may invent
// or an earlier catalog advertised, are counted under method="(other)"), codes from
// the eight protocol error codes plus "ok". adapterkit_calls_caller_errors_total tells
// the failures that were the caller's doing (lifecycle.MethodStats.CallerErrors).
package promcollector

import (
	"path/filepath"
	goruntime "runtime"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/prommetrics"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/registry"
)

// ForRegistry returns a collector of the adapters open in r, safe for concurrent
// use. An adapter's version label is read from its file name where it follows the
// discovery naming convention.
func ForRegistry(r *registry.Registry) prometheus.Collector {
	return prommetrics.New(func() prommetrics.Snapshot {
		hs := r.Opened()
		out := prommetrics.Snapshot{Adapters: make([]prommetrics.Adapter, 0, len(hs))}
		for _, h := range hs {
			st := h.Stats()
			a := prommetrics.Adapter{Name: h.Name(), Up: h.Status().Running, Figures: figures(&st)}
			if _, v, err := discovery.ParseFileName(filepath.Base(h.Path()), goruntime.GOOS); err == nil && v != nil {
				a.Version = v.String()
			}
			a.Methods = prommetrics.CatalogMethods(h.Catalog())
			out.Adapters = append(out.Adapters, a)
		}
		return out
	})
}

// figures copies what the collector reads of st.
func figures(st *lifecycle.Stats) prommetrics.Figures {
	f := prommetrics.Figures{InFlight: st.InFlight, Restarts: st.Restarts, Violations: st.Violations, LimitHits: st.LimitHits,
		Starts: st.Backoff.Starts, FailedStarts: st.Backoff.Failed, StartFailures: st.Backoff.Failures, Abandoned: st.Abandoned,
		Running: st.Pid != 0, MemoryBytes: st.Usage.MemoryBytes, CPU: st.Usage.CPU, HasMemory: st.Usage.HasMemory, HasCPU: st.Usage.HasCPU}
	for i := range st.Methods {
		ms := &st.Methods[i]
		f.Methods = append(f.Methods, prommetrics.MethodFigures{Method: ms.Method, Calls: ms.Calls, Errors: ms.Errors,
			CallerErrors: ms.CallerErrors, Uncertain: ms.Uncertain, Count: ms.Latency.Count, Sum: ms.Latency.Sum, Latency: &ms.Latency})
	}
	return f
}
