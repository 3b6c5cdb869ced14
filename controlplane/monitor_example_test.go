//go:build linux || darwin

package controlplane_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/adapterkit/adapterkit/controlplane"
)

// A host that creates the control socket itself (as systemd's socket activation
// does) hands it over in ServerConfig.Listener, and reads the running daemon's
// figures in process through a Monitor, e.g. to export them as metrics.
func ExampleMonitor() {
	dir, _ := os.MkdirTemp("", "cpm")
	defer os.RemoveAll(dir)
	adapters := filepath.Join(dir, "adapters")
	_ = os.Mkdir(adapters, 0o700)
	ln, err := net.Listen("unix", filepath.Join(dir, "ctl.sock"))
	if err != nil {
		fmt.Println(err)
		return
	}

	var mon controlplane.Monitor
	fmt.Println("before serving:", mon.Status() == nil)
	ctx, stop := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- controlplane.Serve(ctx, controlplane.ServerConfig{
			Listener: ln, Dirs: []string{adapters}, Monitor: &mon,
			OnReady: func() { close(ready) },
		})
	}()
	<-ready
	st := mon.Status()
	fmt.Println("health:", st.Health, "clients:", st.Clients, "adapters open:", len(mon.Adapters()))
	stop()
	fmt.Println("shutdown:", <-done, "after:", mon.Status() == nil)
	// Output:
	// before serving: true
	// health: ok clients: 0 adapters open: 0
	// shutdown: <nil> after: true
}
