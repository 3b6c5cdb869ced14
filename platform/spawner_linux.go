package platform

import (
	"context"
	"os"
	"runtime"
	"sync"
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
