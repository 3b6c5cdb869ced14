package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"

	"github.com/adapterkit/adapterkit/plugin"
	"github.com/adapterkit/adapterkit/wire"
)

// childEnv makes the test binary run as an adapter process (see runChild).
const childEnv = "PLUGIN_TEST_CHILD"

// runChild runs this test binary as an adapter process, chosen by $PLUGIN_TEST_CHILD:
//   - "noisy": an adapter whose OnInitialize and whose method test.noisy.print write
//     garbage to stdout in every way a program can (fmt, os.Stdout, file descriptor 1, a
//     child process inheriting os.Stdout);
//   - "invalid": an adapter with an invalid catalog;
//   - "device": a plain adapter with one method, test.device.read;
//   - "printer": prints a line on stdout and exits (the noisy adapter's child).
func runChild() {
	switch os.Getenv(childEnv) {
	case "printer":
		fmt.Println("garbage from a child process")
		os.Exit(0)
	case "device":
		svc := plugin.NewService("test.device", 1)
		plugin.Handle(svc, "test.device.read", func(context.Context, struct{}) (struct{}, error) {
			return struct{}{}, plugin.Errorf(wire.CodeUnavailable, "no device")
		})
		plugin.Main(&plugin.Adapter{Services: []*plugin.Service{svc}})
	case "invalid":
		svc := plugin.NewService("system.bad", 1)
		plugin.Handle(svc, "system.bad.x", func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil })
		plugin.Main(&plugin.Adapter{Services: []*plugin.Service{svc}})
	case "noisy":
		svc := plugin.NewService("test.noisy", 1)
		plugin.Handle(svc, "test.noisy.print", func(_ context.Context, p json.RawMessage) (json.RawMessage, error) {
			fmt.Println("garbage from fmt.Println")
			fmt.Fprintln(os.Stdout, "garbage via os.Stdout")
			writeFD1("garbage via the stdout descriptor\n")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"=printer")
			cmd.Stdout = os.Stdout
			if err := cmd.Run(); err != nil {
				return nil, err
			}
			return p, nil
		})
		plugin.Main(&plugin.Adapter{
			Services: []*plugin.Service{svc},
			OnInitialize: func(context.Context) error {
				fmt.Println("garbage during initialize")
				return nil
			},
		})
	}
	fmt.Fprintln(os.Stderr, "unknown child mode")
	os.Exit(2)
}
