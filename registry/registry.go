package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-version"

	"github.com/adapterkit/adapterkit/discovery"
	"github.com/adapterkit/adapterkit/internal/digest"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/runtime"
)

// Config configures a Registry. A nil *Config is valid and means all defaults; the
// caller's Config is copied and never written.
type Config struct {
	// Dirs are the directories searched for NAME[@CONSTRAINT] references (see package
	// discovery for the naming convention).
	Dirs []string
	// AllowGroupWritable takes adapters that the group of their directory may replace
	// (discovery.Options.AllowGroupWritable); by default only files and directories
	// writable by their owner alone, the host's user or root, are taken.
	AllowGroupWritable bool
	// Env is the environment every adapter receives; nil means an empty one.
	Env []string
	// Stderr receives the adapters' standard error; nil discards it.
	Stderr io.Writer
	// Limits lowers the protocol's bounds; nil means the protocol's values.
	Limits *limits.Limits
	// Logger receives the registry's and adapters' logs; nil is silent. Each
	// adapter's standard error is logged line by line through a sub-logger named after
	// the adapter (see lifecycle.Config.StderrLogger and docs/observability.md).
	Logger hclog.Logger
	// StderrLevel is the level of adapters' standard error lines that are not hclog
	// JSON records (default Debug).
	StderrLevel hclog.Level
	// AdapterLogLevel, when set, is passed to every adapter as $ADAPTERKIT_LOG_LEVEL,
	// the level of the logger plugin gives adapters (see plugin.Logger).
	AdapterLogLevel hclog.Level
	// LogTail is how many of its last standard error lines each adapter's Stats keeps
	// (0: none).
	LogTail int
	// Observer, if set, is told of every adapter's calls and process events.
	Observer *lifecycle.Observer
	// Resources limits each adapter's process tree where the platform supports it.
	Resources platform.Resources
	// Isolation chooses how every adapter's process tree is contained
	// (lifecycle.Config.Isolation; zero: the strongest available). A debugger that
	// executes the adapter (dlv exec) needs platform.IsolationNoPIDNamespace; see
	// docs/debugging.md.
	Isolation platform.Isolation
	// Sandbox, when set, restricts what every adapter may read, write, execute and
	// connect to (see platform.Sandbox); nil leaves them their user's permissions.
	Sandbox *platform.Sandbox
	// Sandboxes maps an adapter's name (as discovery parses it from the file name) to
	// its own sandbox, which replaces Sandbox for that adapter; a nil value runs that
	// adapter without one.
	//
	// No grant of an adapter (a path of its sandbox, or its executable file) may be
	// equal to or beneath a Sandbox.Write path of another adapter of the registry: that
	// one could replace what it is granted. Every start (first open, restart, upgrade)
	// compares the adapter with every other the registry knows (discovered, started,
	// or named here) and is refused with a *GrantOverlapError; [Config.CheckGrants]
	// checks the pairs named here at once. Shared read grants are allowed, and two
	// adapters under one Sandbox with a Write path overlap. An adapter without a
	// sandbox has no write grant to compare (it may write whatever its user may).
	Sandboxes map[string]*platform.Sandbox
	// Pins maps an adapter executable's absolute path to the hex SHA-256 its contents
	// must have; a pinned adapter whose file differs is not started. The pin is checked
	// at every start, restarts included, on the bytes that are executed (see
	// platform.Config.Digest): a restart that finds the file changed fails, the adapter
	// is not restarted, and OnExit receives an event whose Restart says why. To pin
	// every file of an adapter name, see Upgrade.Allowed.
	Pins map[string]string
	// Prerelease lets NAME[@CONSTRAINT] references select pre-release versions.
	Prerelease bool
	// Restart is the restart policy of every opened adapter (zero: never restart; set
	// MaxRestarts to restart). A call made while its adapter restarts waits out the
	// backoff and the new start within its own deadline. Its Backoff, MaxBackoff and
	// ResetAfter also set the start backoff, kept per executable file across Opens: an
	// adapter whose starts fail is started again only after it (Open and calls fail
	// at once meanwhile with a *lifecycle.BackoffError); its WedgedAfter, when an
	// adapter whose calls' slots are all abandoned is restarted (see
	// lifecycle.RestartPolicy; both are on with the zero value).
	Restart lifecycle.RestartPolicy
	// OnExit is called when an adapter ends without the host closing it.
	OnExit func(lifecycle.ExitEvent)
	// Reservations records package directories reserved by adapters whose cleanup
	// could not be verified; nil means the registry keeps its own.
	Reservations *lifecycle.Reservations
	// Upgrade, when set, makes handles opened by NAME[@CONSTRAINT] follow new versions
	// of their adapter found by [Registry.Rescan] (see [Upgrade]); nil keeps each
	// handle on the version it opened.
	Upgrade *Upgrade
	// Refused is the record of refused adapter files the host kept from an earlier
	// run (see [Refusal]): none of them is started until a new file replaces it or
	// [Registry.Retry] forgets it. Those whose file is gone, and those refused by a
	// pin that the pins in force no longer refuse, are left out.
	Refused []Refusal
	// OnRefused, if set, is given the whole record each time it changes (a file
	// refused, a refusal forgotten), in the order of the changes, for the host to
	// keep it across restarts. It must not call the registry.
	OnRefused func([]Refusal)
}

// errRegistryClosed is what a closed Registry returns.
var errRegistryClosed = fmt.Errorf("registry: %w", runtime.ErrClosed)

// Registry opens adapters and binds typed clients to them. It is safe for concurrent use.
type Registry struct {
	cfg Config
	log hclog.Logger
	res *lifecycle.Reservations

	closing   context.Context // cancelled by Close: ends the opens under way
	stopOpens context.CancelFunc
	opening   sync.WaitGroup // opens and rescans under way; Add only under mu while !closed
	// rescanning serializes rescans: of two versions dropped in quick succession, the
	// second rescan finds the first's upgrade done and moves on to the newest.
	rescanning sync.Mutex

	mu      sync.Mutex
	closed  bool
	handles map[*Handle]struct{}
	scan    *discovery.Result
	starts  map[string]*startRecord // by executable path: the start backoff of each

	logMu    sync.Mutex
	rejected map[string]string // path -> reason and detail last logged

	// The record of refused files (refusals.go): the one place every start asks.
	refMu    sync.Mutex
	refusals map[string]*refusal // by path
	saveMu   sync.Mutex          // orders the record's hand-overs to OnRefused

	// The adapters' grants (grants.go): writes says some sandbox grants a write.
	writes  bool
	grantMu sync.Mutex
	started map[string]map[string]bool // executables started, by adapter name
}

// New returns a Registry. cfg may be nil.
func New(cfg *Config) *Registry {
	r := &Registry{handles: make(map[*Handle]struct{}), started: make(map[string]map[string]bool)}
	r.closing, r.stopOpens = context.WithCancel(context.Background())
	if cfg != nil {
		r.cfg = *cfg
		r.cfg.Dirs = slices.Clone(cfg.Dirs)
		r.cfg.Env = slices.Clone(cfg.Env)
		r.cfg.Pins = maps.Clone(cfg.Pins)
		r.cfg.Sandboxes = maps.Clone(cfg.Sandboxes)
		r.cfg.Refused = slices.Clone(cfg.Refused)
		if cfg.Upgrade != nil {
			up := *cfg.Upgrade
			up.Allowed = maps.Clone(up.Allowed)
			r.cfg.Upgrade = &up
		}
	}
	r.log = r.cfg.Logger
	if r.log == nil {
		r.log = hclog.NewNullLogger()
	}
	r.log = r.log.Named("registry")
	r.writes = r.cfg.hasWrites()
	if err := r.cfg.CheckGrants(); err != nil {
		r.log.Error("sandboxes overlap: neither adapter will be started", "error", err)
	}
	if r.initRefusals(r.cfg.Refused) {
		r.saveRefusals()
	}
	r.cfg.Refused = nil
	r.res = r.cfg.Reservations
	if r.res == nil {
		r.res = new(lifecycle.Reservations)
	}
	return r
}

// Reservations returns the record of reserved package directories.
func (r *Registry) Reservations() *lifecycle.Reservations { return r.res }

// Discover scans the configured directories again and returns what was found and
// every file that was not taken, with its reason.
func (r *Registry) Discover(ctx context.Context) (*discovery.Result, error) {
	if ctx == nil {
		return nil, runtime.ErrNilContext
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	res, err := discovery.Scan(ctx, &discovery.Options{AllowGroupWritable: r.cfg.AllowGroupWritable}, r.cfg.Dirs...)
	var de *discovery.DirError
	if errors.As(err, &de) && errors.Is(de.Reason, discovery.ErrNotAbsolute) {
		// The same hint as for a relative adapter path: a host's working directory is
		// not a reliable base, so the registry never resolves against it.
		return nil, fmt.Errorf("registry: Config.Dirs: %w (directories are searched by absolute path only: make it absolute, e.g. with filepath.Abs)", err)
	}
	if err != nil {
		return nil, err
	}
	r.logRejected(res.Rejected)
	r.mu.Lock()
	r.scan = res
	r.mu.Unlock()
	return res, nil
}

// logRejected logs the files a scan did not take: at Warn those named like an
// adapter (NAME_vVERSION), which someone meant to be used, at Debug the others.
// Each is logged once per change (a file newly rejected, or rejected for another
// reason), not at every scan: a daemon rescans every few hundred milliseconds for
// each Discover stream.
func (r *Registry) logRejected(rejected []discovery.Rejected) {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	now := make(map[string]string, len(rejected))
	for _, rj := range rejected {
		why := rj.Reason.String() + "\x00" + rj.Detail
		now[rj.Path] = why
		if prev, ok := r.rejected[rj.Path]; ok && prev == why {
			continue
		}
		args := []any{"path", rj.Path, "reason", rj.Reason.String()}
		if rj.Detail != "" {
			args = append(args, "detail", rj.Detail)
		}
		_, _, perr := discovery.ParseFileName(filepath.Base(rj.Path), "")
		if perr == nil || rj.Reason == discovery.WrongOSExtension {
			r.log.Warn("file not taken as an adapter", args...)
		} else {
			r.log.Debug("file not taken as an adapter", args...)
		}
	}
	r.rejected = now
}

func (r *Registry) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errRegistryClosed
	}
	return nil
}

// IsPath reports whether ref names an adapter by path rather than NAME[@CONSTRAINT]:
// it contains a path separator.
func IsPath(ref string) bool {
	return strings.ContainsAny(ref, `/\`) || filepath.IsAbs(ref)
}

// notAbsolute is the refusal of a relative path.
func notAbsolute(ref string) error {
	return fmt.Errorf("registry: adapter %q: %w (adapters are launched by absolute path only: make it absolute, e.g. with filepath.Abs, or open NAME[@VERSION] from Config.Dirs)", ref, platform.ErrNotAbsolute)
}

// resolve turns a reference into an adapter executable's absolute path: an absolute
// path is taken as it is (a relative path is refused, never resolved), and NAME or
// NAME@CONSTRAINT selects the newest matching version in the configured directories,
// as [Registry.Lookup] does.
func (r *Registry) resolve(ctx context.Context, ref string) (string, error) {
	if IsPath(ref) {
		if err := r.check(); err != nil {
			return "", err
		}
		if !filepath.IsAbs(ref) {
			return "", notAbsolute(ref)
		}
		return filepath.Clean(ref), nil
	}
	a, err := r.Lookup(ctx, ref)
	if err != nil {
		return "", err
	}
	return a.Path, nil
}

// Lookup finds the discovered adapter a reference names, in the last scan of the
// configured directories (scanning them on first use, and once more when nothing
// matches: a file may have been added since). NAME or NAME@CONSTRAINT selects the newest
// matching version; an absolute path must be the path of a discovered adapter. Errors:
// a *discovery.RefError for a malformed reference, platform.ErrNotAbsolute for a relative path,
// a *discovery.NotFoundError (or discovery.ErrNotFound, for a path) when nothing
// matches, or the scan's error. It is the one reference resolution of the module
// (package controlplane resolves through it).
func (r *Registry) Lookup(ctx context.Context, ref string) (discovery.Adapter, error) {
	if ctx == nil {
		return discovery.Adapter{}, runtime.ErrNilContext
	}
	if err := r.check(); err != nil {
		return discovery.Adapter{}, err
	}
	var find func(*discovery.Result) (discovery.Adapter, error)
	if IsPath(ref) {
		if !filepath.IsAbs(ref) {
			return discovery.Adapter{}, notAbsolute(ref)
		}
		p := filepath.Clean(ref)
		find = func(res *discovery.Result) (discovery.Adapter, error) {
			for _, a := range res.Adapters {
				if a.Path == p {
					if rf, refused := r.refusedFile(a.Path); refused {
						return discovery.Adapter{}, &RefusedError{Refusal: rf}
					}
					return a, nil
				}
			}
			return discovery.Adapter{}, fmt.Errorf("registry: %s is not among the discovered adapters: %w", p, discovery.ErrNotFound)
		}
	} else {
		parsed, err := discovery.ParseRef(ref)
		if err != nil {
			return discovery.Adapter{}, err
		}
		opts := &discovery.SelectOptions{Prerelease: r.cfg.Prerelease}
		find = func(res *discovery.Result) (discovery.Adapter, error) { return r.selectAdmitted(res, parsed, opts) }
	}
	r.mu.Lock()
	scan := r.scan
	r.mu.Unlock()
	if scan != nil {
		a, err := find(scan)
		var re *RefusedError
		if err == nil || errors.As(err, &re) {
			return a, err
		}
	}
	scan, err := r.Discover(ctx)
	if err != nil {
		return discovery.Adapter{}, err
	}
	return find(scan)
}

// Open resolves ref, starts the adapter with the given configuration
// (nil, a JSON object as json.RawMessage or []byte, or any value that encodes to a JSON
// object), performs the handshake and returns a Handle. The adapter runs under the
// configured restart policy until the Handle or the Registry is closed. A Close of the
// Registry while Open is under way ends the open: Open then fails with runtime.ErrClosed.
func (r *Registry) Open(ctx context.Context, ref string, configuration any) (*Handle, error) {
	if ctx == nil {
		return nil, runtime.ErrNilContext
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, errRegistryClosed
	}
	r.opening.Add(1)
	r.mu.Unlock()
	defer r.opening.Done()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	defer context.AfterFunc(r.closing, func() { cancel(errRegistryClosed) })()
	h, err := r.open(ctx, ref, configuration)
	if err != nil && context.Cause(ctx) == errRegistryClosed && !errors.Is(err, runtime.ErrClosed) {
		err = errors.Join(errRegistryClosed, err)
	}
	return h, err
}

func (r *Registry) open(ctx context.Context, ref string, configuration any) (*Handle, error) {
	var (
		g        *gen
		name     string
		follow   *discovery.Ref
		refusals []*UpgradeError
	)
	if IsPath(ref) {
		path, err := r.resolve(ctx, ref)
		if err != nil {
			return nil, err
		}
		if rf, refused := r.refusedFile(path); refused {
			return nil, &RefusedError{Refusal: rf}
		}
		cfgJSON, err := encodeObject(configuration)
		if err != nil {
			return nil, &lifecycle.OpenError{Path: path, Stage: lifecycle.StageConfig, Err: err}
		}
		name = filepath.Base(path)
		var ver *version.Version
		if n, v, perr := discovery.ParseFileName(name, ""); perr == nil {
			name, ver = n, v
		}
		pin, id, err := r.pinOf(name, path)
		if errors.Is(err, digest.ErrMismatch) {
			return nil, &RefusedError{Refusal: r.refuse(name, versionString(ver), path, id, err), cause: err}
		}
		if err != nil {
			return nil, &lifecycle.OpenError{Path: path, Stage: lifecycle.StageSpawn, Err: err}
		}
		sup, err := r.supervise(ctx, path, name, pin, cfgJSON)
		if err != nil {
			return nil, err
		}
		g = newGen(sup, path, ver, pin)
		return r.addHandle(&Handle{reg: r, name: name, cfgJSON: cfgJSON}, g, nil)
	}
	a, err := r.Lookup(ctx, ref)
	if err != nil {
		return nil, err
	}
	cfgJSON, err := encodeObject(configuration)
	if err != nil {
		return nil, &lifecycle.OpenError{Path: a.Path, Stage: lifecycle.StageConfig, Err: err}
	}
	g, refusals, err = r.openNamed(ctx, ref, a, cfgJSON)
	r.tellRefused(refusals)
	if err != nil {
		return nil, err
	}
	name = a.Name
	if r.cfg.Upgrade != nil {
		if follow, err = followRef(ref, g.version); err != nil {
			return nil, errors.Join(err, g.sup.Close())
		}
	}
	return r.addHandle(&Handle{reg: r, name: name, ref: follow, cfgJSON: cfgJSON}, g, refusals)
}

// supervise starts one version of an adapter under the registry's settings.
func (r *Registry) supervise(ctx context.Context, path, name, digest string, cfgJSON json.RawMessage) (*lifecycle.Supervisor, error) {
	lcfg := lifecycle.Config{
		Path: path, Digest: digest, Env: r.cfg.Env, Configuration: cfgJSON, Stderr: r.cfg.Stderr,
		Resources: r.cfg.Resources, Isolation: r.cfg.Isolation, Limits: r.cfg.Limits, Logger: r.log, Name: name,
		Reservations: r.res, OnExit: r.cfg.OnExit, Sandbox: r.sandboxOf(name),
		Admit:  func() error { return r.admit(path, name) },
		Starts: r.startsOf(path),
	}
	r.observe(&lcfg)
	return lifecycle.Supervise(ctx, lcfg, r.cfg.Restart)
}

// Opened returns the handles currently open, sorted by path.
func (r *Registry) Opened() []*Handle {
	r.mu.Lock()
	hs := make([]*Handle, 0, len(r.handles))
	for h := range r.handles {
		hs = append(hs, h)
	}
	r.mu.Unlock()
	sort.Slice(hs, func(i, j int) bool { return hs[i].Path() < hs[j].Path() })
	return hs
}

// CloseError lists the adapters whose process trees could not be verified gone when
// the registry closed. errors.Is(err, platform.ErrUnverified) is true.
type CloseError struct {
	Unverified map[string]error // by executable path
}

func (e *CloseError) Error() string {
	paths := make([]string, 0, len(e.Unverified))
	for p := range e.Unverified {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	fmt.Fprintf(&b, "registry: %d adapter(s) not verified gone:", len(paths))
	for _, p := range paths {
		fmt.Fprintf(&b, " %s (%v);", p, e.Unverified[p])
	}
	return strings.TrimSuffix(b.String(), ";")
}

// Unwrap returns the per-adapter errors.
func (e *CloseError) Unwrap() []error {
	out := make([]error, 0, len(e.Unverified))
	for _, err := range e.Unverified {
		out = append(out, err)
	}
	return out
}

// Close closes every open adapter concurrently (each verified, see Handle.Close) and
// refuses further use; opens under way are ended first (they fail with runtime.ErrClosed, and
// their callers get their cleanup results). It returns nil when every process tree was
// proven gone, else a *CloseError. ctx bounds the wait; adapters still closing when it
// ends are reported.
func (r *Registry) Close(ctx context.Context) error {
	if ctx == nil {
		return runtime.ErrNilContext
	}
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stopOpens()
	opened := make(chan struct{})
	go func() {
		r.opening.Wait()
		close(opened)
	}()
	select {
	case <-opened:
	case <-ctx.Done():
		return &CloseError{Unverified: map[string]error{"(opens under way)": ctx.Err()}}
	}
	r.mu.Lock()
	hs := make([]*Handle, 0, len(r.handles))
	for h := range r.handles {
		hs = append(hs, h)
	}
	r.mu.Unlock()
	type result struct {
		path string
		err  error
	}
	results := make(chan result, len(hs))
	for _, h := range hs {
		go func() { results <- result{h.Path(), h.Close()} }()
	}
	ce := &CloseError{Unverified: make(map[string]error)}
	for range hs {
		select {
		case res := <-results:
			if res.err != nil {
				ce.Unverified[res.path] = res.err
			}
		case <-ctx.Done():
			r.mu.Lock()
			for h := range r.handles {
				ce.Unverified[h.Path()] = ctx.Err()
			}
			r.mu.Unlock()
			return ce
		}
	}
	if len(ce.Unverified) > 0 {
		return ce
	}
	return nil
}

// sandboxOf is the sandbox of the adapter named name: its own entry in Sandboxes, else
// Sandbox.
func (r *Registry) sandboxOf(name string) *platform.Sandbox {
	if sb, ok := r.cfg.Sandboxes[name]; ok {
		return sb
	}
	return r.cfg.Sandbox
}
