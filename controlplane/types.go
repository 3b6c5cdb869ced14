package controlplane

import (
	"encoding/json"
	"time"

	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/wire"
)

// Params and results of the methods, as they travel in envelopes. The [Client]
// returns the result types; a daemon answers with them.

// PingResult is the result of Ping. The daemon sends ServerTime; RoundTrip and
// Skew are measured by the [Client].
type PingResult struct {
	// ServerTime is the daemon's clock when it answered.
	ServerTime time.Time `json:"server_time"`
	// RoundTrip is the time from sending the request to receiving the response.
	RoundTrip time.Duration `json:"-"`
	// Skew is ServerTime minus the client's clock at the midpoint of the round
	// trip: positive when the daemon's clock is ahead.
	Skew time.Duration `json:"-"`
}

// VersionResult is the result of Version.
type VersionResult struct {
	// Daemon is the daemon's own version (ServerConfig.Version).
	Daemon string `json:"daemon"`
	// Protocol is the control-plane protocol version: 1 (docs/control-plane.md).
	Protocol int `json:"protocol"`
	// AdapterProtocol is the Adapter process protocol version spoken with adapters.
	AdapterProtocol int `json:"adapter_protocol"`
	// Go is the Go version the daemon was built with.
	Go string `json:"go"`
}

// AdapterInfo identifies one discovered adapter file.
type AdapterInfo struct {
	Name    string    `json:"name"`
	Version string    `json:"version"`
	Path    string    `json:"path"` // absolute
	Dir     string    `json:"dir"`  // the package directory (the scanned directory)
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
}

// CapabilitiesResult is the result of Capabilities.
type CapabilitiesResult struct {
	// Adapters lists every discovered adapter, by name then version (newest first).
	Adapters []AdapterCapabilities `json:"adapters"`
}

// AdapterCapabilities is one adapter's catalog, or why it could not be had.
type AdapterCapabilities struct {
	AdapterInfo
	// Services is the catalog the adapter advertised in its handshake.
	Services []wire.Service `json:"services,omitempty"`
	// Error says why the adapter could not be opened (then Services is empty).
	Error *Error `json:"error,omitempty"`
}

// discoverParams are the params of Discover.
type discoverParams struct {
	// TimeoutMS is how long the stream lasts, in milliseconds: required, from 1 to
	// 10 minutes.
	TimeoutMS int64 `json:"timeout_ms"`
}

// The changes a Discover event reports (DiscoverEvent.Change).
const (
	changeFound   = "found"   // first seen in this stream (at its start, or a new file)
	changeChanged = "changed" // its file changed (size, time or identity)
	changeRemoved = "removed" // no longer found
)

// DiscoverEvent is the params of one Discover event.
type DiscoverEvent struct {
	// Change says what the event reports: "found" (first seen in this stream, at
	// its start or a new file), "changed" (its file changed: size, time or
	// identity) or "removed" (no longer found).
	Change  string      `json:"change"`
	Adapter AdapterInfo `json:"adapter"`
}

// SendParams are the params of Send.
type SendParams struct {
	// Adapter is NAME, NAME@CONSTRAINT or the absolute path of a discovered adapter
	// (required).
	Adapter string `json:"adapter"`
	// Method is the adapter method to call (required).
	Method string `json:"method"`
	// Params are the method's params, a JSON object; absent means {}.
	Params json.RawMessage `json:"params,omitempty"`
	// TimeoutMS bounds the call in milliseconds, from 1 to the call deadline
	// (30000); 0 or absent means the call deadline.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

// SendResult is the result of Send.
type SendResult struct {
	// Adapter is the adapter called (the reference resolved).
	Adapter AdapterInfo `json:"adapter"`
	// Value is the adapter's result, as it sent it.
	Value json.RawMessage `json:"value"`
}

// CallDetails are the details of a failed Send: what the adapter layer said.
type CallDetails struct {
	// Adapter is the absolute path of the adapter, when the reference resolved.
	Adapter string `json:"adapter,omitempty"`
	Method  string `json:"method,omitempty"`
	// AdapterCode is the Adapter process protocol code (invalid, closed, aborted,
	// denied, unavailable, busy, failed, deadline) when a call was made or refused.
	AdapterCode string `json:"adapter_code,omitempty"`
	// RawCode is the code as the adapter sent it, when it differs.
	RawCode string `json:"raw_code,omitempty"`
	// Uncertain: the request reached the adapter and no reply came; it may have acted.
	Uncertain bool `json:"uncertain,omitempty"`
	// NeverStarted: nothing was sent to the adapter.
	NeverStarted bool `json:"never_started,omitempty"`
	// Violation names the adapter's protocol violation that ended its connection.
	Violation string `json:"violation,omitempty"`
	// ViolationDetail is what exactly was violated (e.g. a frame whose length reads as
	// text: something printed to stdout).
	ViolationDetail string `json:"violation_detail,omitempty"`
	// Stage is how far starting the adapter got, when that failed (spawn, handshake...).
	Stage string `json:"stage,omitempty"`
	// Cleanup says why the adapter's process tree could not be verified gone.
	Cleanup string `json:"cleanup,omitempty"`
	// Refusal is the record of the refused file, with Stage "refused".
	Refusal *registry.Refusal `json:"refusal,omitempty"`
	// Backoff is the start backoff that refused to start the adapter: the failed
	// starts in a row, when the next start may be tried, and the last failure.
	Backoff *BackoffStatus `json:"backoff,omitempty"`
	// NotFound says, with code not_found, what was not found: "name" (no adapter
	// of that name) or "version" (no version of it matches); Candidates are then the
	// names, or the versions of the name, that were found.
	NotFound   string   `json:"not_found,omitempty"`
	Candidates []string `json:"candidates,omitempty"`
}

// The daemon's health (StatusResult.Health).
const (
	healthOK       = "ok"
	healthDegraded = "degraded"
)

// StatusResult is the result of Status.
type StatusResult struct {
	// Health is the daemon's summary of its state: "ok" (serving, every cleanup
	// verified, the start-up sweep clean, the record of refused files saved) or
	// "degraded" (serving, but some process tree is not verified gone: an unverified
	// cleanup, or a leftover the start-up sweep could not remove; or the record of
	// refused files is held in memory only, RefusedNotSaved).
	Health  string    `json:"health"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	Dirs    []string  `json:"dirs"`
	// Clients is the number of connected clients, this one included.
	Clients int `json:"clients"`
	// RefusedClients counts connections refused: another user, or too many clients;
	// a remote client also for its certificate, its identity or its handshake.
	RefusedClients uint64 `json:"refused_clients"`
	// DroppedClients counts clients dropped for not reading their answers in time,
	// clients closed for being idle (ServerConfig.IdleTimeout,
	// RemoteConfig.IdleTimeout), and socket clients closed, idle, to make room for a
	// new one when every slot was taken.
	DroppedClients uint64 `json:"dropped_clients"`
	// InFlight is the number of Send calls under way.
	InFlight int64 `json:"in_flight"`
	// Calls counts Send calls made since start.
	Calls uint64 `json:"calls"`
	// Adapters lists the adapters open, by name: one entry per name (the version
	// serving it), and one per other version asked for by path or constraint.
	Adapters []AdapterStatus `json:"adapters"`
	// Restarts counts adapter restarts since start.
	Restarts int `json:"restarts"`
	// Exits counts adapters that ended without the daemon closing them.
	Exits uint64 `json:"exits"`
	// UnverifiedCleanups counts process trees not proven gone.
	UnverifiedCleanups int `json:"unverified_cleanups"`
	// Reserved lists package directories reserved (an adapter of it runs, or its
	// cleanup was not verified).
	Reserved []string `json:"reserved"`
	// Sweep is what the start-up sweep found left by a crashed predecessor.
	Sweep SweepStatus `json:"sweep"`
	// Remote reports the TCP listener, when the daemon has one.
	Remote *RemoteStatus `json:"remote,omitempty"`
	// Refused lists the adapter files refused (an upgrade to them failed, or a pin
	// did not allow them), oldest first: none is started until a new file replaces
	// it, its pin is removed, or Upgrade retries it. The record survives restarts of
	// a daemon with a state directory.
	Refused []RefusedStatus `json:"refused"`
	// RefusedNotSaved, when set, says why the record of refused files could not be
	// saved into the state directory: it is held in memory only (a restart would
	// forget it) and Health is "degraded" until a retry saves it.
	RefusedNotSaved string `json:"refused_not_saved,omitempty"`
	// RefusedSaveFailures counts the failed saves of that record since start.
	RefusedSaveFailures uint64 `json:"refused_save_failures"`
}

// RefusedStatus is one refused adapter file (registry.Refusal: name, version, path,
// size, mod_time, sha256, at, reason, pin) and the version serving its name.
type RefusedStatus struct {
	registry.Refusal
	// Serving is the version serving the adapter's name instead: the one open, else
	// the one a call by name would open; "" when none would.
	Serving string `json:"serving"`
}

// AdapterStatus is one open adapter.
type AdapterStatus struct {
	AdapterInfo
	// State is "running"; "restarting" while none runs; "backoff" while its last
	// starts failed and the next is not tried before Backoff.NextTry (calls fail at
	// once meanwhile); "failed" when its last start failed, the backoff has passed and
	// the next call starts it again.
	State string `json:"state"`
	// PID is the adapter process's id (0 when none runs).
	PID int `json:"pid,omitempty"`
	// Mechanism says how its process tree is supervised (e.g. "cgroup|pdeathsig").
	Mechanism string `json:"mechanism,omitempty"`
	Restarts  int    `json:"restarts"`
	// InFlight is the number of requests in flight on its connection.
	InFlight int `json:"in_flight"`
	// Dropped lists the stronger mechanisms not in effect for it, each with why
	// (platform.Supervision), the unenforced parts of a best-effort sandbox included.
	Dropped []DroppedMechanism `json:"dropped,omitempty"`
	// Sandbox describes the sandbox in force (platform.Supervision.Sandbox); absent when
	// the adapter runs without one.
	Sandbox string `json:"sandbox,omitempty"`
	// Upgrades counts the new versions that took over (AdapterInfo is the version
	// serving new calls).
	Upgrades int `json:"upgrades"`
	// UpgradeError is why the last new version found was refused, "" when none was
	// since the last upgrade.
	UpgradeError string `json:"upgrade_error"`
	// Draining lists the replaced versions still finishing their calls.
	Draining []DrainingStatus `json:"draining"`
	// Abandoned is the number of in-flight slots held by calls whose callers gave up
	// and whose replies are still awaited: when every slot is so held for the
	// disconnect grace, the adapter is restarted (docs/supervision.md).
	Abandoned int `json:"abandoned"`
	// Starts counts the processes of its executable started, restarts included;
	// FailedStarts the starts that failed (docs/supervision.md).
	Starts       uint64 `json:"starts"`
	FailedStarts uint64 `json:"failed_starts"`
	// Backoff is set while its last starts failed, omitted once a start succeeded.
	Backoff *BackoffStatus `json:"backoff,omitempty"`
	AdapterFigures
}

// BackoffStatus is the start backoff of an adapter whose last starts failed.
type BackoffStatus struct {
	// Failures counts the failed starts in a row.
	Failures int `json:"failures"`
	// NextTry is when the next start may be tried; omitted once that has passed.
	NextTry *time.Time `json:"next_try,omitempty"`
	// LastError is why the last start failed.
	LastError string `json:"last_error"`
}

// DrainingStatus is a replaced version of an adapter still finishing its calls.
type DrainingStatus struct {
	Version string `json:"version"`
	Path    string `json:"path"`
	// PID is its process's id (0 when none runs).
	PID int `json:"pid"`
	// InFlight is the number of its calls under way.
	InFlight int `json:"in_flight"`
}

// capabilitiesParams are the params of Capabilities.
type capabilitiesParams struct {
	// Adapter, when set (NAME, NAME@CONSTRAINT or a path, as Send's), limits the
	// answer to that adapter, whose errors are then the response's, as Send's are.
	Adapter string `json:"adapter,omitempty"`
}

// upgradeParams are the params of Upgrade.
type upgradeParams struct {
	// Adapter, when set, is the adapter name whose new versions are looked for; absent:
	// every adapter open.
	Adapter string `json:"adapter,omitempty"`
	// Retry forgets the refusals of Adapter's files first, so that they are tried
	// again (Adapter is then required).
	Retry bool `json:"retry,omitempty"`
}

// UpgradeResult is the result of Upgrade: the status of the adapters concerned once
// each new version took over or was refused.
type UpgradeResult struct {
	Adapters []AdapterStatus `json:"adapters"`
	// RefusedNotSaved, when set, says that the record of refused files (the refusals
	// this upgrade made included) could not be saved: it is held in memory only.
	RefusedNotSaved string `json:"refused_not_saved,omitempty"`
}

// DroppedMechanism is one supervision mechanism not in effect for an adapter.
type DroppedMechanism struct {
	// Mechanism names it (e.g. "cgroup", "userns|pidns").
	Mechanism string `json:"mechanism"`
	// Reason says why it was not used.
	Reason string `json:"reason"`
}

// SweepStatus reports the start-up sweep (platform.Sweep).
type SweepStatus struct {
	Swept  []SweptItem `json:"swept"`
	Failed []SweptItem `json:"failed"`
	// Error is why the sweep could not run, if it could not.
	Error string `json:"error,omitempty"`
}

// SweptItem is one leftover the sweep found.
type SweptItem struct {
	Path    string `json:"path"`
	HostPID int    `json:"host_pid"`
	Pids    []int  `json:"pids,omitempty"`
	Error   string `json:"error,omitempty"`
}

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
	// control characters escaped). It is omitted (nil) for a remote client of role
	// read, which may not see adapter standard error; present, maybe empty, for
	// everyone else.
	LogTail []string `json:"log_tail,omitzero"`
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
