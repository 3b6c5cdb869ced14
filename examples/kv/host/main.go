// Command host is go-plugin's KV host ported to adapterkit: it starts the KV adapter
// (examples/kv/adapter) and puts or gets one value:
//
//	host -adapter /abs/path/kv_v1.0.0 -data DIR put KEY VALUE
//	host -adapter /abs/path/kv_v1.0.0 -data DIR get KEY
//
// The adapter keeps its values in DIR (made absolute here), which the host passes in
// the adapter's configuration. The adapter is closed, and its process tree verified
// gone, before the host exits.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/adapterkit/adapterkit/examples/kv/kvapi"
	"github.com/adapterkit/adapterkit/registry"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("host", flag.ContinueOnError)
	fs.SetOutput(stderr)
	adapter := fs.String("adapter", "", "absolute `PATH` of the KV adapter")
	data := fs.String("data", "", "`DIR` the adapter keeps its values in")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	op := fs.Args()
	if *adapter == "" || *data == "" || len(op) < 2 || (op[0] == "put") != (len(op) == 3) || (op[0] != "put" && op[0] != "get") {
		fmt.Fprintln(stderr, "usage: host -adapter PATH -data DIR (put KEY VALUE | get KEY)")
		return 2
	}
	dir, err := filepath.Abs(*data)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if err := kv(context.Background(), *adapter, dir, op, stdout); err != nil {
		fmt.Fprintln(stderr, "host:", err)
		return 1
	}
	return 0
}

// kv starts the adapter, runs one operation and closes the adapter.
func kv(ctx context.Context, adapter, dir string, op []string, stdout io.Writer) (err error) {
	reg := registry.New(nil) // no discovery directories: adapters are opened by path
	defer func() {
		if cerr := reg.Close(ctx); err == nil {
			err = cerr
		}
	}()
	h, err := reg.Open(ctx, adapter, kvapi.Config{Dir: dir})
	if err != nil {
		return err
	}
	store, err := kvapi.NewClient(h)
	if err != nil {
		return err
	}
	if op[0] == "put" {
		return store.Put(ctx, op[1], []byte(op[2]))
	}
	v, err := store.Get(ctx, op[1])
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", v)
	return err
}
