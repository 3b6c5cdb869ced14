// Command gpecho is the go-plugin v1.8.0 echo plugin of the benchmark, with go-plugin's
// defaults. Its one argument chooses the protocol: "netrpc" or "grpc" (go-plugin's
// server picks gRPC whenever a gRPC server is configured and the plugin supports it).
package main

import (
	"fmt"
	"os"

	"github.com/hashicorp/go-plugin"

	"github.com/adapterkit/adapterkit/e2e/bench/internal/gp"
)

func main() {
	cfg := &plugin.ServeConfig{HandshakeConfig: gp.Handshake, Plugins: gp.Plugins()}
	switch arg := argument(); arg {
	case "grpc":
		cfg.GRPCServer = plugin.DefaultGRPCServer
	case "netrpc":
	default:
		fmt.Fprintf(os.Stderr, "gpecho: the argument must be netrpc or grpc, not %q\n", arg)
		os.Exit(2)
	}
	plugin.Serve(cfg)
}

func argument() string {
	if len(os.Args) != 2 {
		return ""
	}
	return os.Args[1]
}
