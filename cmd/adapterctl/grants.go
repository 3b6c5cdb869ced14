package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/adapterkit/adapterkit/controlplane"
	"github.com/adapterkit/adapterkit/platform"
)

// sandboxDefaultRead names what every sandboxed adapter may read besides its own
// directory (SECURITY.md, "The default policy", lists the same; platform grants it).
const sandboxDefaultRead = "/usr /bin /sbin /lib* (system programs and libraries); /etc: ld.so.cache ld.so.conf " +
	"ld.so.conf.d localtime nsswitch.conf passwd group hosts host.conf resolv.conf gai.conf services " +
	"protocols ssl/certs ssl/openssl.cnf ca-certificates pki/tls/certs; /dev/zero /dev/urandom /dev/random"

// sandboxGrant is one permission of a sandbox in force, for inspect.
type sandboxGrant struct {
	Access string `json:"access"` // read, write, exec, net, unix, inotify
	What   string `json:"what"`   // a path, or a description
	From   string `json:"from"`   // "default", or the flag that asked for it
}

// sandboxGrants lists what the sandbox sb lets the adapter at path do: the default
// policy first, then each --allow-* grant. Nil for no sandbox.
func sandboxGrants(sb *platform.Sandbox, path string) []sandboxGrant {
	if sb == nil {
		return nil
	}
	g := []sandboxGrant{
		{"read", filepath.Dir(path) + " (the adapter's directory)", "default"},
		{"read", sandboxDefaultRead, "default"},
		{"write", "/dev/null and its private $TMPDIR", "default"},
		{"exec", "itself, its #! interpreter (and that interpreter's installation prefix, readable) and the dynamic loader", "default"},
	}
	for _, p := range sb.Read {
		g = append(g, sandboxGrant{"read", p, "--allow-read"})
	}
	for _, p := range sb.Write {
		g = append(g, sandboxGrant{"write", p, "--allow-write"})
	}
	for _, p := range sb.Exec {
		g = append(g, sandboxGrant{"exec", p, "--allow-exec"})
	}
	switch {
	case sb.Network:
		g = append(g, sandboxGrant{"net", "all", "--allow-net"})
	case len(sb.ConnectPorts) > 0:
		ports := make([]string, len(sb.ConnectPorts))
		for i, p := range sb.ConnectPorts {
			ports[i] = strconv.Itoa(int(p))
		}
		g = append(g, sandboxGrant{"net", "TCP connect to ports " + strings.Join(ports, ","), "--allow-net"})
	default:
		g = append(g, sandboxGrant{"net", "none", "default"})
	}
	if sb.UnixSockets {
		g = append(g, sandboxGrant{"unix", "may create Unix sockets", "--allow-unix"})
	}
	if sb.Inotify {
		g = append(g, sandboxGrant{"inotify", "may create inotify instances (the user's quota, shared with the host)", "--allow-inotify"})
	}
	return g
}

// printGrants prints the grants of inspect's sandbox line, one per line.
func printGrants(w io.Writer, grants []sandboxGrant) {
	for _, g := range grants {
		fmt.Fprintf(w, "  %-6s %s [%s]\n", g.Access, g.What, g.From)
	}
}

// printSandboxes prints, below status's adapter table, the sandbox in force for each
// adapter that runs in one and the parts of its supervision dropped, as the daemon
// reports them (controlplane.AdapterStatus: Sandbox, Dropped).
func printSandboxes(w io.Writer, adapters []controlplane.AdapterStatus) error {
	ew := &errWriter{w: w}
	for _, a := range adapters {
		if a.Sandbox != "" {
			ew.printf("  %s: sandbox %s\n", a.Name, a.Sandbox)
		}
		for _, d := range a.Dropped {
			ew.printf("  %s: %s dropped: %s\n", a.Name, d.Mechanism, d.Reason)
		}
	}
	return ew.err
}
