package controlplane

import (
	"maps"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/lifecycle"
)

// AdapterFigures are what the daemon knows of one adapter's work and resource use
// (part of AdapterStatus; see docs/observability.md).
type AdapterFigures struct {
	// Methods are the per-method call figures since the version serving was opened
	// (across restarts; a new version starts its own), sorted by method.
	Methods []MethodFigures `json:"methods"`
	// MemoryBytes and MemoryPeakBytes are the current and peak memory of the running
	// adapter's whole process tree; CPUSeconds its processor time. Each is omitted
	// where the platform cannot say (or when no adapter process runs).
	MemoryBytes     *int64   `json:"memory_bytes,omitempty"`
	MemoryPeakBytes *int64   `json:"memory_peak_bytes,omitempty"`
	CPUSeconds      *float64 `json:"cpu_seconds,omitempty"`
	// Violations counts connections the adapter ended by breaking the protocol.
	Violations uint64 `json:"violations"`
	// LastExit is the last end of an adapter process, omitted when none ended yet.
	LastExit *ExitStatus `json:"last_exit,omitempty"`
	// LogTail is the adapter's last standard error lines (at most 20, oldest first,
	// control characters escaped).
	LogTail []string `json:"log_tail"`
}

// MethodFigures are the call figures of one method.
type MethodFigures struct {
	Method string `json:"method"`
	// Calls counts the calls that returned, successes and errors.
	Calls uint64 `json:"calls"`
	// Errors counts failed calls by adapter protocol error code.
	Errors map[string]uint64 `json:"errors"`
	// Uncertain counts failed calls whose outcome is unknown (sent, no reply).
	Uncertain uint64 `json:"uncertain"`
	InFlight  int64  `json:"in_flight"`
	// P50MS and P99MS are latency quantiles in milliseconds (from a fixed-size
	// histogram: within 12.5%).
	P50MS float64 `json:"p50_ms"`
	P99MS float64 `json:"p99_ms"`
	// BytesOut and BytesIn total the params sent and the results received.
	BytesOut uint64 `json:"bytes_out"`
	BytesIn  uint64 `json:"bytes_in"`
}

// ExitStatus is how an adapter process ended.
type ExitStatus struct {
	Time time.Time `json:"time"`
	// Status is the exit status as the OS reports it, "" when unknown.
	Status string `json:"status,omitempty"`
	// Cause is why its connection ended, "" when the daemon closed it.
	Cause string `json:"cause,omitempty"`
}

// logTailLines is how many standard error lines the daemon keeps per adapter.
const logTailLines = 20

// figuresOf converts an adapter's snapshot.
func figuresOf(st lifecycle.Stats) AdapterFigures {
	f := AdapterFigures{Methods: make([]MethodFigures, len(st.Methods)), Violations: st.Violations, LogTail: st.LogTail}
	if f.LogTail == nil {
		f.LogTail = []string{}
	}
	for i, m := range st.Methods {
		errs := make(map[string]uint64, len(m.Errors))
		for c, n := range maps.All(m.Errors) {
			errs[string(c)] = n
		}
		f.Methods[i] = MethodFigures{Method: m.Method, Calls: m.Calls, Errors: errs, Uncertain: m.Uncertain,
			InFlight: m.InFlight, P50MS: ms(m.P50), P99MS: ms(m.P99), BytesOut: m.BytesOut, BytesIn: m.BytesIn}
	}
	u := st.Usage
	if u.HasMemory {
		f.MemoryBytes = &u.MemoryBytes
	}
	if u.HasPeak {
		f.MemoryPeakBytes = &u.MemoryPeakBytes
	}
	if u.HasCPU {
		s := u.CPU.Seconds()
		f.CPUSeconds = &s
	}
	if ex := st.LastExit; ex != nil {
		f.LastExit = &ExitStatus{Time: ex.Time.UTC(), Status: ex.Status}
		if ex.Cause != nil {
			f.LastExit.Cause = ex.Cause.Error()
		}
	}
	return f
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// adapterLogger is the logger the adapters' standard error is logged under: the
// host's own (ServerConfig.Logger), so that an adapter's records are named after the
// daemon and the adapter alone ("adapterctl.thermometer").
func adapterLogger(cfg *ServerConfig, log hclog.Logger) hclog.Logger {
	if cfg.Logger != nil {
		return cfg.Logger
	}
	return log
}
