package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/adapterkit/adapterkit/e2e/bench/internal/gp"
	"github.com/adapterkit/adapterkit/examples/echo/echoapi"
	"github.com/adapterkit/adapterkit/lifecycle"
	"github.com/adapterkit/adapterkit/platform"
	"github.com/adapterkit/adapterkit/registry"
)

// instance is one open connection to one child process.
type instance interface {
	// Call sends params (a JSON object) to the child's echo and returns the reply.
	Call(ctx context.Context, params []byte) ([]byte, error)
	// Pid is the child's process id, for reading its memory.
	Pid() int
	// Close ends the connection and the child; verified says whether the process tree
	// was proven gone.
	Close() (verified bool, err error)
}

// system is one of the compared implementations.
type system struct {
	name string
	// pipe marks the systems that speak length-prefixed JSON over stdin/stdout; they
	// also run the 3.9 MiB echo.
	pipe bool
	open func(ctx context.Context) (instance, error)
}

// Binary names in the build directory.
const (
	binEcho  = "akecho"
	binGP    = "gpecho"
	binFloor = "floorecho"
	binPing  = "pingpong"
	// adaptersDir is the subdirectory of the build directory that holds the echo
	// adapter under a discoverable name, for the registry of the regmem workload.
	adaptersDir = "adapters"
	// echoAdapterName is the echo adapter's file name there (NAME_vVERSION).
	echoAdapterName = "echo_v1.0.0"
)

// System names, in their default order. adapterkit is the typed path a host writes (a
// contract's typed client, registry.Call, against typed SDK handlers: structs encoded
// and decoded at both ends); adapterkit-raw the same adapter and connection kind on
// json.RawMessage (lifecycle's Call, and a handler returning its raw params).
const (
	sysAdapterkit = "adapterkit"
	sysRaw        = "adapterkit-raw"
	sysFloor      = "floor"
	sysNetRPC     = "goplugin-netrpc"
	sysGRPC       = "goplugin-grpc"
	// sysPingpong is the physical limit: 64 raw bytes bounced over the child's stdin
	// and stdout (cmd/pingpong), no framing, no JSON. It takes part in rtt only.
	sysPingpong = "pingpong"
	// sysSandbox is adapterkit-raw with the adapter sandboxed (platform.Sandbox, the
	// default policy; Linux only): what containment adds to a start and to a call. It
	// runs only when named with -systems.
	sysSandbox = "adapterkit-sandbox"
)

var allSystems = []string{sysAdapterkit, sysRaw, sysFloor, sysNetRPC, sysGRPC, sysPingpong}

// knownSystems are the systems -systems may name: the default ones and the sandbox.
var knownSystems = append(append([]string(nil), allSystems...), sysSandbox)

// verifies reports whether the system's close is the verified close, which must succeed.
func verifies(name string) bool { return name == sysAdapterkit || name == sysRaw || name == sysSandbox }

// takesPart reports whether system takes part in workload: pingpong bounces only the
// small params, one caller at a time (rtt); regmem measures what a registry holds per
// adapter, so only the systems opened through a registry run it.
func takesPart(system, workload string) bool {
	switch {
	case system == sysPingpong:
		return workload == "rtt" || workload == "rtt-steady"
	case workload == "regmem":
		return system == sysAdapterkit || system == sysSandbox
	case workload == "stream":
		return system == sysAdapterkit
	}
	return true
}

// newSystem returns the system called name, whose child programs are in binDir.
func newSystem(name, binDir string) (*system, error) {
	switch name {
	case sysAdapterkit:
		path := filepath.Join(binDir, binEcho)
		return &system{name: name, pipe: true, open: func(ctx context.Context) (instance, error) {
			return openTyped(ctx, path)
		}}, nil
	case sysRaw, sysSandbox:
		path := filepath.Join(binDir, binEcho)
		var sb *platform.Sandbox
		if name == sysSandbox {
			sb = &platform.Sandbox{}
		}
		return &system{name: name, pipe: true, open: func(ctx context.Context) (instance, error) {
			a, err := lifecycle.Open(ctx, lifecycle.Config{Path: path, Sandbox: sb})
			if err != nil {
				return nil, err
			}
			return akInstance{a}, nil
		}}, nil
	case sysFloor:
		path := filepath.Join(binDir, binFloor)
		return &system{name: name, pipe: true, open: func(ctx context.Context) (instance, error) {
			return openFloor(ctx, path)
		}}, nil
	case sysPingpong:
		path := filepath.Join(binDir, binPing)
		return &system{name: name, open: func(ctx context.Context) (instance, error) {
			return openPingpong(ctx, path)
		}}, nil
	case sysNetRPC, sysGRPC:
		proto, arg := plugin.ProtocolNetRPC, "netrpc"
		if name == sysGRPC {
			proto, arg = plugin.ProtocolGRPC, "grpc"
		}
		path := filepath.Join(binDir, binGP)
		return &system{name: name, open: func(ctx context.Context) (instance, error) {
			return openGoPlugin(ctx, path, arg, proto)
		}}, nil
	}
	return nil, fmt.Errorf("unknown system %q (known: %v)", name, knownSystems)
}

// echoMethod is the echo adapter's method that returns its params unchanged.
const echoMethod = "example.echo.echo"

type akInstance struct{ a *lifecycle.Adapter }

func (i akInstance) Call(ctx context.Context, p []byte) ([]byte, error) {
	return i.a.Call(ctx, echoMethod, p)
}

func (i akInstance) Pid() int { return i.a.Pid() }

// Close is the verified close: stdin closed, the adapter exits, the tree is proven gone.
func (i akInstance) Close() (bool, error) {
	err := i.a.Close()
	return err == nil, err
}

// typedInstance is the typed path: a registry opens the adapter and a contract's typed
// client calls example.echo.record (the small workloads) or example.echo.blob (big),
// whose SDK handlers decode the params into the struct and encode it back.
type typedInstance struct {
	reg *registry.Registry
	h   *registry.Handle
	c   *registry.Client
}

func openTyped(ctx context.Context, path string) (instance, error) {
	reg := registry.New(nil)
	h, err := reg.Open(ctx, path, nil)
	if err != nil {
		_ = reg.Close(ctx)
		return nil, err
	}
	c, err := registry.NewClient(h, echoapi.Service)
	if err != nil {
		_ = reg.Close(ctx)
		return nil, err
	}
	return &typedInstance{reg: reg, h: h, c: c}, nil
}

// typedPayloads are the typed values of the workloads' payloads, by their first byte.
var typedPayloads = map[*byte]any{}

// typedRecord registers the typed value of smallParams.
func typedRecord(p []byte) []byte {
	typedPayloads[&p[0]] = echoapi.Record{Probe: "inlet", Seq: 42, Unit: "celsius", Pad: "0123456789ab"}
	return p
}

// typedBlob registers the typed value of a bigParams.
func typedBlob(p []byte) []byte {
	typedPayloads[&p[0]] = echoapi.Blob{S: string(p[len(`{"s":"`) : len(p)-2])}
	return p
}

// Call calls with the typed value of p, checks the typed reply and returns p.
func (i *typedInstance) Call(ctx context.Context, p []byte) ([]byte, error) {
	switch v := typedPayloads[&p[0]].(type) {
	case echoapi.Record:
		got, err := registry.Call(ctx, i.c, echoapi.EchoRecord, v)
		if err != nil {
			return nil, err
		}
		if got != v {
			return nil, fmt.Errorf("echo mismatch: sent %+v, got %+v", v, got)
		}
	case echoapi.Blob:
		got, err := registry.Call(ctx, i.c, echoapi.EchoBlob, v)
		if err != nil {
			return nil, err
		}
		if got.S != v.S {
			return nil, fmt.Errorf("echo mismatch: sent %d bytes, got %d", len(v.S), len(got.S))
		}
	default:
		return nil, errors.New("no typed value for these params")
	}
	return p, nil
}

func (i *typedInstance) Pid() int { return i.h.Status().Pid }

// Close is the verified close of the adapter, then of the registry.
func (i *typedInstance) Close() (bool, error) {
	err := i.h.Close()
	if cerr := i.reg.Close(context.Background()); err == nil {
		err = cerr
	}
	return err == nil, err
}

type gpInstance struct {
	c    *plugin.Client
	echo gp.Echoer
	pid  int
}

// openGoPlugin starts the go-plugin plugin with go-plugin's defaults, except for a
// silent host logger (the default logs every plugin line at Trace level to stderr).
func openGoPlugin(_ context.Context, path, arg string, proto plugin.Protocol) (instance, error) {
	cmd := exec.Command(path, arg)
	c := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  gp.Handshake,
		Plugins:          gp.Plugins(),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{proto},
		Logger:           hclog.NewNullLogger(),
	})
	rc, err := c.Client()
	if err != nil {
		c.Kill()
		return nil, err
	}
	raw, err := rc.Dispense(gp.Name)
	if err != nil {
		c.Kill()
		return nil, err
	}
	e, ok := raw.(gp.Echoer)
	if !ok {
		c.Kill()
		return nil, errors.New("go-plugin dispensed something that is not an Echoer")
	}
	return &gpInstance{c: c, echo: e, pid: cmd.Process.Pid}, nil
}

func (i *gpInstance) Call(ctx context.Context, p []byte) ([]byte, error) { return i.echo.Echo(ctx, p) }

func (i *gpInstance) Pid() int { return i.pid }

// Close is go-plugin's Kill: it closes the client, waits up to 2 s for the plugin to
// exit, kills it otherwise, and verifies nothing of what the plugin may have started.
func (i *gpInstance) Close() (bool, error) {
	i.c.Kill()
	return false, nil
}

// checkEcho reports whether got is the echo of want.
func checkEcho(got, want []byte) error {
	if !bytes.Equal(got, want) {
		return fmt.Errorf("echo mismatch: sent %d bytes, got %d", len(want), len(got))
	}
	return nil
}
