package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
	"github.com/adapterkit/adapterkit/registry"
	"github.com/adapterkit/adapterkit/runtime"
)

// A typed client of a daemon's adapter: the contract the adapter implements
// (echoapi.Service), bound to the adapter through the daemon with the same checks, and
// called with Go values and the same typed errors as an adapter the host embeds.
func ExampleClient_Adapter() {
	dir, _ := os.MkdirTemp("", "cpt")
	defer os.RemoveAll(dir)
	adapters := filepath.Join(dir, "adapters")
	_ = os.Mkdir(adapters, 0o700)
	_ = copyExecutable(filepath.Join(built, "echo_v1.2.0"), filepath.Join(adapters, "echo_v1.2.0")) // the echo adapter
	sock := filepath.Join(dir, "ctl.sock")

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- Serve(ctx, ServerConfig{Socket: sock, Dirs: []string{adapters}, OnReady: func() { close(ready) }})
	}()
	<-ready

	c, err := Dial(context.Background(), sock) // or DialTLS, for a remote daemon
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := c.Adapter(context.Background(), "echo")
	if err != nil {
		fmt.Println(err)
		return
	}
	echo, err := registry.NewClient(a, echoapi.Service) // checked against the catalog the daemon has
	if err != nil {
		fmt.Println(err)
		return
	}
	rec, err := registry.Call(context.Background(), echo, echoapi.EchoRecord, echoapi.Record{Probe: "inlet", Seq: 7})
	fmt.Println(rec.Probe, rec.Seq, err)

	_, err = registry.Call(context.Background(), echo, echoapi.Fail, echoapi.FailParams{Code: "busy", Message: "try later"})
	var ce *runtime.CallError
	fmt.Println(errors.As(err, &ce), ce.Code, ce.Message, ce.NeverStarted, ce.Uncertain)

	_ = c.Close()
	stop()
	fmt.Println("shutdown:", <-done)
	// Output:
	// inlet 7 <nil>
	// true busy try later false false
	// shutdown: <nil>
}

// copyExecutable copies the file from to the new file to, executable.
func copyExecutable(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
