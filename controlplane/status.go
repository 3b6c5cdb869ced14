package controlplane

import (
	"maps"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/adapterkit/adapterkit/lifecycle"
)

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
