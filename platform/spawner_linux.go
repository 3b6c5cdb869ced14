package platform

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// The parent-death signal (PR_SET_PDEATHSIG) fires when the *thread* that forked the
// child exits, not the process (golang/go#27505). Every adapter is therefore forked by
// one goroutine locked to its OS thread, and that goroutine (with its thread) lives as
// long as any adapter it started has not been reaped. When the last one is reaped it
// returns while still locked, so the runtime ends the thread; it has no living children
// then, so nothing is signalled. A host that dies takes the thread, and so every
// adapter, with it. The same thread briefly enters an adapter's cgroup v1 cgroups
// around its fork (see cgroupv1_linux.go): the lock also keeps that per-thread state
// off every other goroutine.

type spawnRequest struct {
	start func() (*os.Process, error)
	reply chan spawnReply
}

type spawnReply struct {
	proc *os.Process
	err  error
}

var spawner struct {
	mu      sync.Mutex
	live    int  // adapters forked (or about to be) and not yet reaped
	running bool // the locked goroutine is running
	reqs    chan spawnRequest
	idle    chan struct{}
}

func init() {
	spawner.reqs = make(chan spawnRequest)
	spawner.idle = make(chan struct{}, 1)
}

// spawn runs start on the locked spawner thread. On success the caller must call
// spawnReaped exactly once, after the child has been reaped.
func spawn(ctx context.Context, start func() (*os.Process, error)) (*os.Process, error) {
	spawner.mu.Lock()
	spawner.live++
	if !spawner.running {
		spawner.running = true
		go spawnLoop()
	}
	spawner.mu.Unlock()
	req := spawnRequest{start: start, reply: make(chan spawnReply, 1)}
	select {
	case spawner.reqs <- req:
	case <-ctx.Done():
		spawnReaped()
		return nil, ctx.Err()
	}
	r := <-req.reply
	if r.err != nil {
		spawnReaped()
	}
	return r.proc, r.err
}

// spawnReaped records that one adapter started by spawn is gone (or never started).
func spawnReaped() {
	spawner.mu.Lock()
	spawner.live--
	if spawner.live == 0 {
		select {
		case spawner.idle <- struct{}{}:
		default:
		}
	}
	spawner.mu.Unlock()
}

func spawnLoop() {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	for {
		select {
		case req := <-spawner.reqs:
			p, err := req.start()
			req.reply <- spawnReply{proc: p, err: err}
		case <-spawner.idle:
			spawner.mu.Lock()
			if spawner.live == 0 {
				spawner.running = false
				spawner.mu.Unlock()
				return
			}
			spawner.mu.Unlock()
		}
	}
}

// markInheritedCloexec sets close-on-exec on every descriptor >= 3 of the host that
// lacks it. Go opens all its descriptors close-on-exec, so such descriptors were
// inherited from the host's own parent (or opened by C code) and would otherwise leak
// into every adapter. This is a process-wide change, made only while
// HostOptions.KeepInheritedFDs is false and reported by MarkedCloseOnExec; descriptors
// a host hands to its own children through exec.Cmd.ExtraFiles are duplicated there and
// are not affected. It returns the descriptors it changed.
func markInheritedCloexec() []int {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	var changed []int
	for _, n := range names {
		fd, err := strconv.Atoi(n)
		if err != nil || fd < 3 || fd == int(d.Fd()) {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err == nil {
			changed = append(changed, fd)
		}
	}
	return changed
}
