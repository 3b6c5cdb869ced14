// Command testhost is a host program for the e2e tests: it opens adapters through
// package lifecycle, reports that they are ready, and waits to be killed. The test
// SIGKILLs it and then checks from /proc that nothing it started is left running.
//
// Usage:
//
//	testhost -adapter /abs/misbehave -pids /abs/pidfile -n 3 -modes grandchild,doublefork,chain [-call]
//
// Every adapter gets the configuration {"mode": M, "pidfile": PIDS}, M taken in turn
// from -modes, so each of its processes appends its own record to PIDS (see
// e2e/cmd/misbehave). When all are open it prints "ready <mechanism>" (the mechanism of
// the first adapter) on stdout. With -call it then starts a misbehave.proc.hang call on
// each adapter (each records "call" once it runs) and prints "calling", so that it can be
// killed in the middle of calls. On SIGTERM or SIGINT it closes the adapters and exits.
//
//	testhost -sweep
//
// runs platform.Sweep as a second host would (it sweeps under its own cgroup, so the
// test starts it where the dead host ran) and prints the report as one JSON object.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/limits"
	"github.com/adapterkit/adapterkit/platform"
)

func main() {
	adapter := flag.String("adapter", "", "absolute path of the misbehave adapter")
	pids := flag.String("pids", "", "absolute path of the pid record the adapters append to")
	n := flag.Int("n", 1, "number of adapters to open")
	modes := flag.String("modes", "grandchild", "comma-separated misbehave modes, used in turn")
	call := flag.Bool("call", false, "start a hanging call on each adapter after ready")
	sweep := flag.Bool("sweep", false, "run platform.Sweep, print its report as JSON and exit")
	flag.Parse()
	if *sweep {
		if err := runSweep(); err != nil {
			fmt.Fprintln(os.Stderr, "testhost:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*adapter, *pids, *n, strings.Split(*modes, ","), *call); err != nil {
		fmt.Fprintln(os.Stderr, "testhost:", err)
		os.Exit(1)
	}
}

func run(path, pids string, n int, modes []string, call bool) error {
	if path == "" || pids == "" || n < 1 || len(modes) == 0 {
		return errors.New("need -adapter, -pids, -n >= 1 and -modes")
	}
	// Installed before anything starts, so that a test's SIGTERM is never fatal midway.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)

	ctx, cancel := context.WithTimeout(context.Background(), limits.CallDeadline)
	defer cancel()
	var adapters []*lifecycle.Adapter
	closeAll := func() error {
		var errs []error
		for _, a := range adapters {
			errs = append(errs, a.Close())
		}
		return errors.Join(errs...)
	}
	for i := range n {
		conf, err := json.Marshal(map[string]string{"mode": modes[i%len(modes)], "pidfile": pids})
		if err != nil {
			return err
		}
		a, err := lifecycle.Open(ctx, lifecycle.Config{
			Path:          path,
			Configuration: conf,
			Name:          fmt.Sprintf("misbehave-%d", i),
			Limits:        &limits.Limits{DisconnectGrace: 300 * time.Millisecond},
		})
		if err != nil {
			return errors.Join(err, closeAll())
		}
		adapters = append(adapters, a)
	}
	fmt.Printf("ready %s\n", adapters[0].Supervision().Mechanism)

	var wg sync.WaitGroup
	if call {
		callCtx, cancelCalls := context.WithCancel(context.Background())
		defer func() { cancelCalls(); wg.Wait() }()
		for _, a := range adapters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = a.Call(callCtx, "misbehave.proc.hang", nil)
			}()
		}
		fmt.Println("calling")
	}
	<-stop
	return closeAll()
}

// sweepItem is a platform.SweptItem as JSON (Err as text).
type sweepItem struct {
	Path    string `json:"path"`
	HostPid int    `json:"host_pid"`
	Pids    []int  `json:"pids"`
	Err     string `json:"err,omitempty"`
}

func runSweep() error {
	ctx, cancel := context.WithTimeout(context.Background(), limits.CallDeadline)
	defer cancel()
	rep, err := platform.Sweep(ctx, nil)
	if err != nil {
		return err
	}
	conv := func(items []platform.SweptItem) []sweepItem {
		out := []sweepItem{}
		for _, it := range items {
			si := sweepItem{Path: it.Path, HostPid: it.HostPid, Pids: it.Pids}
			if it.Err != nil {
				si.Err = it.Err.Error()
			}
			out = append(out, si)
		}
		return out
	}
	return json.NewEncoder(os.Stdout).Encode(map[string][]sweepItem{"swept": conv(rep.Swept), "failed": conv(rep.Failed)})
}
