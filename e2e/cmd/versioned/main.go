// Command versioned is a test adapter for upgrades: one program installed under
// several NAME_vVERSION file names, which knows its version from the name it was
// started by. It serves example.echo version 1: echo (its params back), sleep
// ({"ms": N}: waits N milliseconds, or until cancelled) and version ({"version",
// "pid"}: which file answered, and its process as the host sees it).
//
// $ADAPTERKIT_TEST_MODE_<VERSION> (e.g. ADAPTERKIT_TEST_MODE_1.2.0) makes that version
// misbehave, so that one environment serves every version of a test:
//
//   - badcatalog: answers the handshake with a catalog that breaks R21;
//   - nosleep: leaves the sleep method out of its catalog;
//   - exit: exits before the handshake;
//   - deaf: its sleep ignores cancellation (it waits the N milliseconds whatever).
package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/adapterkit/adapterkit/internal/proto"
	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

type empty struct{}

type sleepParams struct {
	MS int `json:"ms"`
}

type versionResult struct {
	Version string `json:"version"`
	Pid     int    `json:"pid"`
}

// pid is the process's id as the host sees it: in a PID namespace getpid says 1,
// while /proc/self names the host's id where /proc is the host's.
func pid() int {
	if s, err := os.Readlink("/proc/self"); err == nil {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return os.Getpid()
}

func main() {
	base := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	_, ver, _ := strings.Cut(base, "_v")
	switch os.Getenv("ADAPTERKIT_TEST_MODE_" + ver) {
	case "exit":
		os.Exit(3)
	case "badcatalog":
		r := proto.NewReader(os.Stdin, 0)
		if _, err := r.ReadFrame(); err != nil {
			os.Exit(1)
		}
		frame, _ := proto.AppendFrame(nil, proto.AppendResult(nil, 1, []byte(`{"protocol":1,"services":[{"id":"system.x","version":1,"methods":["system.x.y"]}]}`)), 0, false)
		_, _ = os.Stdout.Write(frame)
		_, _ = r.ReadFrame() // until the host closes stdin
		return
	case "nosleep":
		serve(ver, false, false)
	case "deaf":
		serve(ver, true, true)
	default:
		serve(ver, true, false)
	}
}

func serve(ver string, withSleep, deaf bool) {
	svc := plugin.NewService("example.echo", 1)
	plugin.Handle(svc, "example.echo.echo", func(_ context.Context, p map[string]any) (map[string]any, error) { return p, nil })
	plugin.Handle(svc, "example.echo.version", func(context.Context, empty) (versionResult, error) {
		return versionResult{Version: ver, Pid: pid()}, nil
	})
	if withSleep {
		plugin.Handle(svc, "example.echo.sleep", func(ctx context.Context, p sleepParams) (sleepParams, error) {
			t := time.NewTimer(time.Duration(p.MS) * time.Millisecond)
			defer t.Stop()
			if deaf {
				<-t.C
				return p, nil
			}
			select {
			case <-t.C:
				return p, nil
			case <-ctx.Done():
				return sleepParams{}, plugin.Errorf(wire.CodeAborted, "sleep canceled")
			}
		})
	}
	plugin.Main(&plugin.Adapter{Services: []*plugin.Service{svc}})
}
