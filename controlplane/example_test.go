package controlplane_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/adapterkit/adapterkit/controlplane"
)

// A daemon and a client in one program: Serve runs until its context ends (a real
// daemon cancels it on SIGTERM with signal.NotifyContext), the client asks over the
// socket.
func Example() {
	dir, _ := os.MkdirTemp("", "cpx")
	defer os.RemoveAll(dir)
	adapters := filepath.Join(dir, "adapters")
	_ = os.Mkdir(adapters, 0o700)
	sock := filepath.Join(dir, "ctl.sock")

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- controlplane.Serve(ctx, controlplane.ServerConfig{
			Socket: sock, Dirs: []string{adapters}, Version: "1.0.0",
			OnReady: func() { close(ready) },
		})
	}()
	<-ready

	c, err := controlplane.Dial(context.Background(), sock)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := c.Version(context.Background())
	fmt.Println("daemon", v.Daemon, "protocol", v.Protocol)
	_, err = c.Send(context.Background(), controlplane.SendParams{Adapter: "nosuch", Method: "x.y"})
	fmt.Println(err)
	_ = c.Close()

	stop()
	fmt.Println("shutdown:", <-done)
	// Output:
	// daemon 1.0.0 protocol 1
	// controlplane: not_found: adapter "nosuch" is not among the discovered adapters: discovery: "nosuch": no adapter with that name (names found: none)
	// shutdown: <nil>
}
