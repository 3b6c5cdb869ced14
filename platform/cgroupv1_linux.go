package platform

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/adapterkit/adapterkit/internal/cgroupfs"
)

// The cgroup v1 fallback for Resources. Hybrid hierarchies (systemd's default for years,
// and many CI machines) mount cgroup2 without the memory and pids controllers, which
// stay on cgroup v1 hierarchies. There each adapter gets, per controller a limit needs,
// a v1 cgroup of the same name as a v2 one, under the host's own v1 cgroup.
//
// v1 membership is per task, and a fork inherits the forking thread's cgroups. clone3
// CLONE_INTO_CGROUP only picks the v2 cgroup. So the spawner thread (locked to its OS
// thread for good, see spawner_linux.go) writes its own tid to each v1 cgroup's tasks
// file just before forking, and moves back right after: the adapter is born inside
// and runs no code outside. While the thread is inside, the limits are relaxed so that
// the host can never be the one that hits them: pids.max counts the thread too (the
// cap is N+1 for the fork, lowered to N before the thread leaves, so the tree never
// has more than N), and the memory limit is set only once the thread has left (an
// out-of-memory kill in the cgroup could otherwise pick the host, a member through the
// thread). Runtime threads are never cloned from a locked thread (the Go runtime hands
// that to its template thread), so no other host thread lands in an adapter's cgroup.

// v1Controllers are the controllers of the limits the fallback applies, by limit name.
var v1Controllers = map[string]string{"memory": "memory", "processes": "pids"}

// v1Mount is one cgroup v1 hierarchy.
type v1Mount struct {
	mountpoint string
	root       string // the cgroup path that mountpoint shows (mountinfo field 4)
}

var v1MountTable struct {
	once   sync.Once
	mounts map[string]v1Mount // controller -> hierarchy
	err    error
}

// cgroupV1Mounts finds the v1 hierarchies in /proc/self/mountinfo.
func cgroupV1Mounts() (map[string]v1Mount, error) {
	m := &v1MountTable
	m.once.Do(func() {
		f, err := os.Open("/proc/self/mountinfo")
		if err != nil {
			m.err = err
			return
		}
		defer f.Close()
		m.mounts, m.err = parseV1Mountinfo(f)
	})
	return m.mounts, m.err
}

// parseV1Mountinfo maps each controller of a mounted cgroup v1 hierarchy (fstype
// "cgroup", the controllers in its super options) to that mount.
func parseV1Mountinfo(r io.Reader) (map[string]v1Mount, error) {
	out := make(map[string]v1Mount)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := slices.Index(f, "-")
		if sep < 5 || sep+3 >= len(f) || f[sep+1] != "cgroup" {
			continue
		}
		for _, opt := range strings.Split(f[sep+3], ",") {
			if _, dup := out[opt]; !dup {
				out[opt] = v1Mount{mountpoint: cgroupfs.Unescape(f[4]), root: cgroupfs.Unescape(f[3])}
			}
		}
	}
	return out, sc.Err()
}

// parseProcCgroup maps each v1 controller of a /proc/<pid>/cgroup (or thread-self)
// listing to its cgroup path; the v2 line ("0::") is skipped.
func parseProcCgroup(b []byte) map[string]string {
	out := make(map[string]string)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 || f[0] == "0" || f[1] == "" {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			out[c] = f[2]
		}
	}
	return out
}

// v1Dir is the directory of controller's cgroup listed in procCgroup (the content of a
// /proc/.../cgroup file).
func v1Dir(controller string, procCgroup []byte) (string, error) {
	mounts, err := cgroupV1Mounts()
	if err != nil {
		return "", err
	}
	m, ok := mounts[controller]
	if !ok {
		return "", fmt.Errorf("no cgroup v1 hierarchy with the %s controller is mounted", controller)
	}
	p, ok := parseProcCgroup(procCgroup)[controller]
	if !ok {
		return "", fmt.Errorf("no %s entry in /proc/self/cgroup", controller)
	}
	rel, err := filepath.Rel(m.root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("own %s cgroup %q is outside its mount root %q", controller, p, m.root)
	}
	return filepath.Join(m.mountpoint, rel), nil
}

// ownV1Dir is the directory of this process's cgroup in controller's v1 hierarchy.
func ownV1Dir(controller string) (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	return v1Dir(controller, b)
}

// v1Limits are the per-adapter v1 cgroups of one tree, for the limits cgroup v2 could
// not apply.
type v1Limits struct {
	mem, pids *cgroup // nil when not used
	memBytes  int64
	maxProcs  int
	// launcherRoom is added to maxProcs after the fork when the child is a launcher
	// stage, which lowers it to maxProcs before the adapter runs (launch_linux.go).
	launcherRoom int

	reasons []string // why limits were not applied
	inside  bool     // the child was born inside mem and pids
}

// newV1Limits creates the v1 cgroups for the limits named in want (of res). Limits it
// cannot prepare are left out, with the reason in v.reasons.
// name is the cgroups' name (as a v2 one, see cgroupName).
func newV1Limits(want []string, res Resources, name string) *v1Limits {
	v := &v1Limits{memBytes: res.MemoryBytes, maxProcs: res.MaxProcesses}
	for _, limit := range want {
		controller := v1Controllers[limit]
		cg, err := makeV1Cgroup(controller, name)
		if err != nil {
			v.reasons = append(v.reasons, fmt.Sprintf("cgroup v1 %s: %v", controller, err))
			continue
		}
		if limit == "memory" {
			v.mem = cg
		} else {
			v.pids = cg
		}
	}
	return v
}

func makeV1Cgroup(controller, name string) (*cgroup, error) {
	parent, err := ownV1Dir(controller)
	if err != nil {
		return nil, err
	}
	cg := &cgroup{path: filepath.Join(parent, name), v1: true}
	if err := os.Mkdir(cg.path, 0o755); err != nil {
		return nil, err
	}
	return cg, nil
}

// cgroups lists the cgroups in use.
func (v *v1Limits) cgroups() []*cgroup {
	var out []*cgroup
	for _, cg := range []*cgroup{v.mem, v.pids} {
		if cg != nil {
			out = append(out, cg)
		}
	}
	return out
}

// applied names the limits in force on the tree.
func (v *v1Limits) applied() []string {
	if v == nil || !v.inside {
		return nil
	}
	var out []string
	if v.mem != nil {
		out = append(out, "memory")
	}
	if v.pids != nil {
		out = append(out, "processes")
	}
	return out
}

// drop gives up the fallback (the child is started without it): reason says why.
func (v *v1Limits) drop(reason error) {
	v.reasons = append(v.reasons, "cgroup v1: "+reason.Error())
	for _, cg := range v.cgroups() {
		_ = cg.remove()
	}
	v.mem, v.pids = nil, nil
}

// errSpawnerStuck: the spawner thread could not leave an adapter's v1 cgroup; the
// fallback is then never used again, so that no later adapter is born in that cgroup.
var errSpawnerStuck = errors.New("the spawner thread could not return to its own cgroup v1")

// v1Disabled is set once errSpawnerStuck happened.
var v1Disabled atomic.Bool

// fork runs start on the calling thread, which must be the locked spawner thread, with
// that thread inside the v1 cgroups, so that the child is born in them; the thread is
// moved back before fork returns. When the thread cannot enter, the child is started
// without the fallback and v's reasons say why. When a limit cannot be set after the
// fork, the child is killed and reaped and the error returned.
func (v *v1Limits) fork(start func() (*os.Process, error)) (*os.Process, error) {
	if v == nil || len(v.cgroups()) == 0 {
		return start()
	}
	if v1Disabled.Load() {
		v.drop(errSpawnerStuck)
		return start()
	}
	own, err := os.ReadFile("/proc/thread-self/cgroup")
	if err != nil {
		v.drop(err)
		return start()
	}
	tid := strconv.Itoa(unix.Gettid())
	var entered []*cgroup
	leave := func() error {
		var errs []error
		for _, cg := range entered {
			errs = append(errs, v.leave(cg, own, tid))
		}
		return errors.Join(errs...)
	}
	if err := v.arm(); err != nil {
		v.drop(err)
		return start()
	}
	for _, cg := range v.cgroups() {
		if err := writeExisting(cg.file("tasks"), tid); err != nil {
			if lerr := leave(); lerr != nil {
				v.stuck(lerr)
				return nil, lerr
			}
			v.drop(err)
			return start()
		}
		entered = append(entered, cg)
	}
	proc, err := start()
	var errs []error
	if err == nil && v.pids != nil {
		// Lowered while the thread still counts: the tree never exceeds maxProcs.
		errs = append(errs, writeExisting(v.pids.file("pids.max"), strconv.Itoa(v.maxProcs+v.launcherRoom)))
	}
	stuck := false
	if lerr := leave(); lerr != nil {
		// The spawner thread (and so, through it, the host) may still be a member: never
		// arm an OOM kill or a process cap that could land on the host or on adapters
		// forked later from this thread.
		v.stuck(lerr)
		errs = append(errs, lerr)
		stuck = true
		if v.pids != nil {
			_ = writeExisting(v.pids.file("pids.max"), "max")
		}
	}
	if err == nil && v.mem != nil && !stuck {
		errs = append(errs, v.setMemory(strconv.FormatInt(v.memBytes, 10)))
	}
	if err != nil {
		return nil, errors.Join(append(errs, err)...)
	}
	if ferr := errors.Join(errs...); ferr != nil {
		_ = proc.Kill()
		_, _ = proc.Wait()
		return nil, fmt.Errorf("cgroup v1 limits not applied after the fork, adapter killed: %w", ferr)
	}
	v.inside = true
	return proc, nil
}

// arm relaxes the limits for the fork: the pids cap leaves room for the spawner thread,
// and memory has no limit while the thread is a member.
func (v *v1Limits) arm() error {
	if v.pids != nil {
		if err := writeExisting(v.pids.file("pids.max"), strconv.Itoa(v.maxProcs+1)); err != nil {
			return err
		}
	}
	if v.mem != nil {
		return v.setMemory("-1")
	}
	return nil
}

// setMemory writes the memory limit, and the memory+swap limit where the kernel has
// one, so that swap cannot dodge it. memsw may never be below the memory limit: it is
// written first when raising and last when lowering.
func (v *v1Limits) setMemory(value string) error {
	mem, sw := v.mem.file("memory.limit_in_bytes"), v.mem.file("memory.memsw.limit_in_bytes")
	_, err := os.Stat(sw)
	hasSwap := err == nil
	if hasSwap && value == "-1" {
		if err := writeExisting(sw, value); err != nil {
			return err
		}
	}
	if err := writeExisting(mem, value); err != nil {
		return err
	}
	if hasSwap && value != "-1" {
		return writeExisting(sw, value)
	}
	return nil
}

// leave moves the thread tid back to its own cgroup of cg's controller (own is the
// thread's /proc/thread-self/cgroup before it entered).
func (v *v1Limits) leave(cg *cgroup, own []byte, tid string) error {
	controller := "pids"
	if cg == v.mem {
		controller = "memory"
	}
	dir, err := v1Dir(controller, own)
	if err != nil {
		return err
	}
	for range 3 {
		if err = writeExisting(filepath.Join(dir, "tasks"), tid); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: %s: %v", errSpawnerStuck, dir, err)
}

// stuck disables the fallback for good after the thread failed to leave.
func (v *v1Limits) stuck(err error) {
	v1Disabled.Store(true)
	v.reasons = append(v.reasons, err.Error())
}

// oomKills reads the number of out-of-memory kills in the memory cgroup: "oom_kill" of
// memory.oom_control (Linux 4.13 and later), else whether the limit was ever hit
// (memory.failcnt) as 1.
func (v *v1Limits) oomKills() (int64, error) {
	b, err := os.ReadFile(v.mem.file("memory.oom_control"))
	if err != nil {
		return 0, err
	}
	if n, ok := keyedValue(b, "oom_kill"); ok {
		return n, nil
	}
	b, err = os.ReadFile(v.mem.file("memory.failcnt"))
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return min(n, 1), err
}

// keyedValue finds "key N" in a flat-keyed cgroup file.
func keyedValue(b []byte, key string) (int64, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// release removes the v1 cgroups; a populated one is left for Sweep and reported.
func (v *v1Limits) release() error {
	var errs []error
	for _, cg := range v.cgroups() {
		if pids := cg.pids(); len(pids) > 0 {
			errs = append(errs, fmt.Errorf("cgroup %s still has processes %v: left for Sweep", cg.path, pids))
			continue
		}
		if err := cg.remove(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// kill signals every member of the v1 cgroups (used when no cgroup v2 holds the tree).
func (v *v1Limits) kill() error {
	var errs []error
	for _, cg := range v.cgroups() {
		errs = append(errs, cg.kill())
	}
	return errors.Join(errs...)
}
