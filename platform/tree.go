package platform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Tree is one started adapter process and everything it starts. Its methods are safe
// for concurrent use.
type Tree struct {
	log  hclog.Logger
	proc *os.Process
	pid  int
	// adapterPid is the adapter's pid where a reaper, the direct child, stands
	// between (Linux); 0 otherwise.
	adapterPid int
	mech       Mechanism
	sup        Supervision // set by osStart where it reports dropped mechanisms (Linux)
	stdin      *os.File
	stdout     *os.File

	// stderrR is the read end of the stderr pipe when a copying goroutine feeds a
	// caller's writer; stderrDone is closed when that goroutine has returned.
	stderrR    *os.File
	stderrDone chan struct{}

	exited chan struct{}
	// beforeReap, when set (Linux), runs once the direct child has exited and before it
	// is reaped, while its pid cannot be given to another process yet.
	beforeReap func()
	state      atomic.Pointer[os.ProcessState]
	limitErr   error
	verified   atomic.Bool
	peakSeen   atomic.Int64 // the largest memory figure Usage summed (no cgroup peak)

	sys *osTree // per-OS state

	closeOnce sync.Once
	closeErr  error
	closed    atomic.Bool
}

// Start validates cfg, starts the adapter under the strongest supervision available and
// returns its Tree. ctx bounds the start only; it does not limit the adapter's life.
// Errors are *LaunchError.
func Start(ctx context.Context, cfg Config) (*Tree, error) {
	if ctx == nil {
		return nil, &LaunchError{Path: cfg.Path, Err: fmt.Errorf("%w: %w", ErrInvalidConfig, errNilContext)}
	}
	if err := ctx.Err(); err != nil {
		return nil, &LaunchError{Path: cfg.Path, Err: errors.Join(ErrStart, err)}
	}
	dir, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	gap, err := sandboxPreflight(&cfg)
	if err != nil {
		return nil, &LaunchError{Path: cfg.Path, Err: err}
	}
	if cfg.Digest != "" {
		if cfg.pin, err = openPinned(ctx, &cfg); err != nil {
			return nil, &LaunchError{Path: cfg.Path, Err: err}
		}
		defer cfg.pin.close() // after the start: the child has what it needs
	}
	t := &Tree{log: cfg.logger().Named("platform"), exited: make(chan struct{})}
	files, err := t.openStdio(&cfg)
	if err != nil {
		return nil, &LaunchError{Path: cfg.Path, Err: errors.Join(ErrStart, err)}
	}
	if err := osStart(ctx, &cfg, dir, files, t); err != nil {
		t.closeStdio(files)
		var le *LaunchError
		if errors.As(err, &le) {
			return nil, err
		}
		return nil, &LaunchError{Path: cfg.Path, Err: errors.Join(ErrStart, err)}
	}
	files.closeChildEnds()
	if gap != nil {
		t.sup.Dropped = append(t.sup.Dropped, *gap)
	}
	t.stdin, t.stdout, t.stderrR = files.stdinW, files.stdoutR, files.stderrRead
	if t.stderrR != nil {
		t.stderrDone = make(chan struct{})
		go t.copyStderr(cfg.Stderr)
	}
	go t.reap()
	if cfg.pin != nil && cfg.pin.changed() {
		killStarted(t)
		return nil, &LaunchError{Path: cfg.Path, Err: pinnedChanged(&cfg)}
	}
	t.log.Debug("adapter started", "path", cfg.Path, "pid", t.pid, "mechanism", t.mech)
	return t, nil
}

// stdio holds the three standard files of the child and the host's ends.
type stdio struct {
	child      [3]*os.File // stdin read end, stdout write end, stderr target
	ownStderr  bool        // child[2] was opened here and must be closed after start
	stdinW     *os.File
	stdoutR    *os.File
	stderrRead *os.File
}

func (t *Tree) openStdio(cfg *Config) (*stdio, error) {
	s := &stdio{}
	var err error
	if s.child[0], s.stdinW, err = stdioPipe(false); err != nil {
		return nil, err
	}
	if s.stdoutR, s.child[1], err = stdioPipe(true); err != nil {
		t.closeStdio(s)
		return nil, err
	}
	growPipe(s.stdinW)
	growPipe(s.stdoutR)
	switch w := cfg.Stderr.(type) {
	case nil:
		// R8, A27: the null device never blocks the writer.
		s.child[2], err = os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		s.ownStderr = true
	case *os.File:
		s.child[2] = w
	default:
		s.stderrRead, s.child[2], err = stdioPipe(true)
		s.ownStderr = true
	}
	if err != nil {
		t.closeStdio(s)
		return nil, err
	}
	return s, nil
}

func (s *stdio) closeChildEnds() {
	for i, f := range s.child {
		if f != nil && (i < 2 || s.ownStderr) {
			f.Close()
		}
	}
}

func (t *Tree) closeStdio(s *stdio) {
	s.closeChildEnds()
	for _, f := range []*os.File{s.stdinW, s.stdoutR, s.stderrRead} {
		if f != nil {
			f.Close()
		}
	}
}

// Buffers of the standard error copy. The goroutine that copies it waits in Read for
// as long as the adapter runs, holding the buffer it reads into: it reads into a small
// one, and only while the adapter writes faster than that (a read fills it) into a
// large one, taken from a pool shared by every tree and given back once a read finds
// the pipe drained (it does not fill the large one either).
const (
	stderrSmallBuf = 512
	stderrLargeBuf = 32 << 10
)

var stderrBufs = sync.Pool{New: func() any { b := make([]byte, stderrLargeBuf); return &b }}

func (t *Tree) copyStderr(w io.Writer) {
	defer close(t.stderrDone)
	copyStderr(w, t.stderrR)
}

// copyStderr copies r to w until r ends or w fails, as io.Copy would, with the buffers
// above.
func copyStderr(w io.Writer, r io.Reader) {
	small := make([]byte, stderrSmallBuf)
	buf := small
	var large *[]byte
	defer func() {
		if large != nil {
			stderrBufs.Put(large)
		}
	}()
	for {
		n, err := r.Read(buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			if werr == nil && m != n {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
		switch {
		case large == nil && n == len(buf):
			large = stderrBufs.Get().(*[]byte)
			buf = *large
		case large != nil && n < len(buf):
			stderrBufs.Put(large)
			large, buf = nil, small
		}
	}
}

// reap is the only place that waits for the direct child.
func (t *Tree) reap() {
	if t.beforeReap != nil {
		t.beforeReap()
	}
	st, err := t.proc.Wait()
	if err != nil {
		t.log.Warn("waiting for adapter failed", "pid", t.pid, "error", err)
	}
	if st != nil {
		t.state.Store(st)
	}
	close(t.exited)
	osReaped(t)
	t.log.Debug("adapter exited", "pid", t.pid, "state", st)
}

// Stdin is the adapter's standard input; the host writes to it and closes it to disconnect.
func (t *Tree) Stdin() io.WriteCloser { return t.stdin }

// Stdout is the adapter's standard output; the host reads from it.
func (t *Tree) Stdout() io.ReadCloser { return t.stdout }

// Pid is the adapter's process id, as seen by the host: the direct child's, or where
// a reaper stands between (Linux, [MechReaper]) the reaper's child's.
func (t *Tree) Pid() int {
	if t.adapterPid != 0 {
		return t.adapterPid
	}
	return t.pid
}

// cgroupPath is the filesystem path of the tree's own cgroup (Linux), or "" when none
// is used. It is removed by Close once the tree has ended.
func (t *Tree) cgroupPath() string { return t.sys.cgroupPath() }

// Supervision reports the mechanisms supervising this tree and, for each stronger one
// that is not in effect, why (decided by this tree's Start alone).
func (t *Tree) Supervision() Supervision {
	s := t.sup
	s.Mechanism = t.mech
	return s
}

// LimitErr is nil when every requested Resources limit was applied, else a *LimitError
// (errors.Is(err, ErrLimitUnsupported)) naming those that were not.
func (t *Tree) LimitErr() error { return t.limitErr }

// LimitHit tells why the kernel stopped the tree, where it can: an error wrapping
// [ErrMemoryLimit] once the out-of-memory killer of the tree's memory cgroup (Linux, with
// Resources.MemoryBytes applied) has killed a process of it, else nil. Ask after
// [Tree.Exited]; after Close it returns what was read before the cgroup was removed.
func (t *Tree) LimitHit() error { return t.sys.limitHit() }

// Exited is closed when the direct child has exited and been reaped. It says nothing
// about descendants, and does not wait for output pipes held open by them.
func (t *Tree) Exited() <-chan struct{} { return t.exited }

// ExitState is the direct child's exit state, nil before Exited is closed.
func (t *Tree) ExitState() *os.ProcessState { return t.state.Load() }

// signal sends sig to the direct child only. It returns os.ErrProcessDone once the
// child has been reaped.
func (t *Tree) signal(sig os.Signal) error {
	select {
	case <-t.exited:
		return os.ErrProcessDone
	default:
	}
	return t.proc.Signal(sig)
}

// Kill forcibly kills the whole tree, all descendants included, without waiting for
// proof; call Verify for that. Killing an already ended tree is not an error.
func (t *Tree) Kill(ctx context.Context) error {
	if ctx == nil {
		return errNilContext
	}
	if t.closed.Load() {
		return errClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return t.sys.kill(ctx, t)
}

// Verify waits until the whole tree is provably gone and returns nil, or returns an
// *UnverifiedError when ctx ends first or when the mechanism in use cannot prove it.
// It does not kill; call Kill first to force the end.
func (t *Tree) Verify(ctx context.Context) error {
	if ctx == nil {
		return errNilContext
	}
	if t.verified.Load() {
		return nil
	}
	if t.closed.Load() {
		return errClosed
	}
	if err := t.sys.verify(ctx, t); err != nil {
		return err
	}
	t.verified.Store(true)
	return nil
}

// Close releases the Tree's pipes, handles and (Linux) its cgroup directory. If the tree
// was not verified gone it is killed first (best effort): a released tree could no
// longer be controlled. A cgroup that still holds processes is left for [Sweep], and
// Close reports it. Close waits for the copy of stderr to the Config.Stderr writer to
// end: after a successful Verify the copy is complete; otherwise what was still in the
// pipe is dropped. It is idempotent.
func (t *Tree) Close() error {
	t.closeOnce.Do(func() {
		if !t.verified.Load() {
			_ = t.sys.kill(context.Background(), t)
		}
		t.closed.Store(true)
		errs := []error{t.stdin.Close(), t.stdout.Close()}
		if t.stderrR != nil {
			if t.verified.Load() {
				// No process is left to hold the write end: the copy ends at EOF after
				// the last byte, so nothing the adapter wrote is lost.
				<-t.stderrDone
			}
			errs = append(errs, t.stderrR.Close())
			<-t.stderrDone
		}
		errs = append(errs, t.sys.release(t))
		for i, e := range errs {
			if errors.Is(e, os.ErrClosed) {
				errs[i] = nil // the caller closed a pipe end itself
			}
		}
		t.closeErr = errors.Join(errs...)
	})
	return t.closeErr
}

// SweepReport lists what Sweep found left behind by hosts that are gone.
type SweepReport struct {
	// Swept are the leftovers killed and removed.
	Swept []SweptItem
	// Failed are the leftovers that could not be killed, proven empty or removed.
	Failed []SweptItem
}

// SweptItem is one leftover (on Linux a cgroup directory).
type SweptItem struct {
	// Path locates the leftover (the cgroup directory).
	Path string
	// HostPid is the pid of the host that created it.
	HostPid int
	// Pids are the processes found in it before it was killed.
	Pids []int
	// Err is why it could not be cleaned (Failed only).
	Err error
}

// Sweep kills and removes what crashed earlier hosts left behind: on Linux, per-adapter
// cgroups under the host's cgroup whose creating host is no longer running. Trees of
// hosts that are alive, this one included, are never touched. On platforms where the
// operating system cleans up by itself (Windows job objects) or where nothing is
// recorded (macOS) it reports nothing.
func Sweep(ctx context.Context, logger hclog.Logger) (SweepReport, error) {
	if ctx == nil {
		return SweepReport{}, errNilContext
	}
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	return osSweep(ctx, logger.Named("platform.sweep"))
}

// sleepUntil waits until t or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}
