package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/adapterkit/adapterkit/platform"
)

// sandboxHelp is the part of each adapter-starting command's help about --sandbox.
const sandboxHelp = `
Sandbox (Linux): --sandbox starts the adapter with least privilege. By default it may
read its own file (not its directory: the files beside it stay closed) and the system
locations programs need: /usr, /bin, /sbin,
/lib*; under /etc exactly ld.so.cache, ld.so.conf, ld.so.conf.d, localtime,
nsswitch.conf, passwd, group, hosts, host.conf, resolv.conf, gai.conf, services,
protocols, ssl/certs, ssl/openssl.cnf, ca-certificates, pki/tls/certs (so the user and
group names of the system, /etc/passwd and /etc/group, are readable; /etc/shadow is
not); /dev/zero, /dev/urandom, /dev/random. It may execute only itself, its
interpreter (a #! line is followed, through /usr/bin/env NAME to the NAME on the
adapter's PATH; an interpreter not granted must be a root-owned system program) and
the dynamic loader, read and write /dev/null and a private temporary directory
($TMPDIR, removed with it), and it has no network and no Unix sockets; it may change
no file's mode, owner, times or extended attributes, even in its grants. inspect lists
the grants in force. Each --allow-* adds a grant; its PATH is opened once at each
start without following symbolic links, and a PATH that goes through one is refused,
naming the path to write instead (e.g. /usr/bin/true for /bin/true on a merged /usr):
  --allow-read PATH    read PATH (a file, or a directory and everything beneath)
  --allow-write PATH   read and write PATH (create, remove, rename beneath it)
  --allow-exec PATH    execute PATH (with its interpreter and loader)
  --allow-net none|all|PORT[,PORT...]   no network (default), all of it, or TCP
                       connections to these ports on any address (no bind, no
                       listen, no UDP)
  --allow-unix         create Unix sockets: any pathname socket it can name becomes
                       reachable, the daemon's control socket included
  --allow-inotify      create inotify instances (to watch files); they count against
                       the user's fs.inotify.max_user_instances (128 by default),
                       shared with the daemon and every other program of that user
The adapter runs as your user and shares its quotas: without --allow-inotify it may
create no inotify instance, and its process tree is limited to 512 tasks (threads
count) by its pids cgroup, or RLIMIT_NPROC in its own user namespace; inspect says
which, or that nothing could apply it.
An interpreter installed outside /usr gets its installation prefix (the parent of its
bin directory) readable; an interpreter reached through a shim (pyenv's, nvm's) needs
--env PATH=... naming the real one, or --allow-exec/--allow-read for the shim's tree.
Enforced by Landlock and seccomp; when the kernel cannot enforce a part, the adapter is
not started and the error names what is missing, unless --sandbox-best-effort is given,
which starts it and reports the gap (inspect shows it). Elsewhere --sandbox is refused.
`

// sandboxOpts are the sandbox flags of the commands that start adapters.
type sandboxOpts struct {
	on, bestEffort, unix bool
	inotify              bool
	read, write, exec    stringList
	net                  string
}

func (o *sandboxOpts) register(f *flags) {
	f.BoolVar(&o.on, "sandbox", false, "start the adapter with least privilege (Linux; see below)")
	f.BoolVar(&o.bestEffort, "sandbox-best-effort", false, "with --sandbox: start even where part of the sandbox cannot be enforced, and report the gap")
	f.Var(&o.read, "allow-read", "with --sandbox: `PATH` the adapter may read (repeatable)")
	f.Var(&o.write, "allow-write", "with --sandbox: `PATH` the adapter may read and write (repeatable)")
	f.Var(&o.exec, "allow-exec", "with --sandbox: `PATH` the adapter may execute (repeatable)")
	f.StringVar(&o.net, "allow-net", "", "with --sandbox: `none|all|PORT[,PORT...]`: no network, all of it, or TCP connect to these ports")
	f.BoolVar(&o.unix, "allow-unix", false, "with --sandbox: let the adapter create Unix sockets")
	f.BoolVar(&o.inotify, "allow-inotify", false, "with --sandbox: let the adapter create inotify instances (its user's quota, shared with the host)")
}

// policy returns the sandbox the flags ask for: nil without --sandbox.
func (o *sandboxOpts) policy() (*platform.Sandbox, error) {
	if !o.on {
		if o.bestEffort || o.unix || o.inotify || o.net != "" || len(o.read)+len(o.write)+len(o.exec) > 0 {
			return nil, usagef("--allow-*, --sandbox-best-effort: give --sandbox too")
		}
		return nil, nil
	}
	sb := &platform.Sandbox{BestEffort: o.bestEffort, UnixSockets: o.unix, Inotify: o.inotify}
	sb.Read, _ = absPaths(o.read)
	sb.Write, _ = absPaths(o.write)
	sb.Exec, _ = absPaths(o.exec)
	if err := setNet(sb, o.net); err != nil {
		return nil, usagef("--allow-net: %v", err)
	}
	return sb, nil
}

// setNet applies an --allow-net value: none, all, or ports separated by commas.
func setNet(sb *platform.Sandbox, v string) error {
	switch v {
	case "", "none":
		return nil
	case "all":
		sb.Network = true
		return nil
	}
	for _, p := range strings.Split(v, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 16)
		if err != nil || n == 0 {
			return fmt.Errorf("%q is not none, all or a list of TCP ports (1-65535)", v)
		}
		sb.ConnectPorts = append(sb.ConnectPorts, uint16(n))
	}
	return nil
}

// sandboxPolicy is what a --policy file says: a sandbox per adapter name, and the
// default ("*") for the others (nil: none).
type sandboxPolicy struct {
	byName map[string]*platform.Sandbox
	dflt   *platform.Sandbox
	hasDef bool
}

// policyHelp documents the --policy file of serve.
const policyHelp = `
--policy FILE gives each adapter its own sandbox. The file is a list of sections, each
starting with "adapter NAME" (NAME as in NAME_vVERSION, or * for every adapter without a
section of its own), followed by one grant per line, spelled like the flags without
their dashes: allow-read PATH, allow-write PATH, allow-exec PATH, allow-net
none|all|PORT[,PORT...], allow-unix, allow-inotify, best-effort; or the single line "unsandboxed" to
run that adapter without a sandbox. Paths must be absolute. Blank lines and lines
starting with # are ignored. A section of an adapter replaces the * section for it
(grants are not merged). Without a * section, the --sandbox flags are the default.
No grant of an adapter (a path, or its executable) may lie inside another adapter's
allow-write path: sections that overlap keep serve from starting, and an adapter whose
executable another may write is refused at its start, naming both.
Example:
  adapter *
  # every adapter: the default sandbox only
  adapter weather
  allow-net 443
  allow-read /etc/weather
  adapter legacy
  unsandboxed
`

// parsePolicy reads a --policy file.
func parsePolicy(r io.Reader) (*sandboxPolicy, error) {
	pol := &sandboxPolicy{byName: map[string]*platform.Sandbox{}}
	var cur *platform.Sandbox
	var curName string
	seen, granted := map[string]bool{}, map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, arg, _ := strings.Cut(line, " ")
		arg = strings.TrimSpace(arg)
		bad := func(format string, a ...any) error {
			return fmt.Errorf("line %d: %s", n, fmt.Sprintf(format, a...))
		}
		if key == "adapter" {
			if arg == "" || strings.ContainsAny(arg, " \t/") {
				return nil, bad("adapter wants one NAME or *")
			}
			if seen[arg] {
				return nil, bad("a second section for %s", arg)
			}
			seen[arg], curName, cur = true, arg, &platform.Sandbox{}
			pol.set(arg, cur)
			continue
		}
		if curName == "" {
			return nil, bad("%q before the first \"adapter NAME\" line", key)
		}
		if cur == nil {
			return nil, bad("%s is unsandboxed: no grant may follow", curName)
		}
		needArg := func() error {
			if arg == "" {
				return bad("%s wants a value", key)
			}
			if key != "allow-net" && !filepath.IsAbs(arg) {
				return bad("%s %q: the path must be absolute", key, arg)
			}
			return nil
		}
		var err error
		switch key {
		case "allow-read", "allow-write", "allow-exec":
			if err = needArg(); err == nil {
				list := map[string]*[]string{"allow-read": &cur.Read, "allow-write": &cur.Write, "allow-exec": &cur.Exec}[key]
				*list = append(*list, filepath.Clean(arg))
			}
		case "allow-net":
			if err = needArg(); err == nil {
				if nerr := setNet(cur, arg); nerr != nil {
					err = bad("%v", nerr)
				}
			}
		case "allow-unix", "allow-inotify", "best-effort", "unsandboxed":
			if arg != "" {
				return nil, bad("%s takes no value", key)
			}
			switch key {
			case "allow-unix":
				cur.UnixSockets = true
			case "allow-inotify":
				cur.Inotify = true
			case "best-effort":
				cur.BestEffort = true
			default:
				if granted[curName] {
					return nil, bad("unsandboxed after grants")
				}
				cur = nil
				pol.set(curName, nil)
			}
		default:
			err = bad("unknown line %q (want adapter, allow-read, allow-write, allow-exec, allow-net, allow-unix, allow-inotify, best-effort or unsandboxed)", key)
		}
		if err != nil {
			return nil, err
		}
		granted[curName] = key != "unsandboxed"
	}
	return pol, sc.Err()
}

func (p *sandboxPolicy) set(name string, sb *platform.Sandbox) {
	if name == "*" {
		p.dflt, p.hasDef = sb, true
		return
	}
	p.byName[name] = sb
}

// readPolicy opens and parses a --policy file.
func readPolicy(path string) (*sandboxPolicy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("--policy: %v", err)
	}
	defer f.Close()
	pol, err := parsePolicy(f)
	if err != nil {
		return nil, usagef("--policy %s: %v", path, err)
	}
	return pol, nil
}

// serverPolicy combines serve's sandbox flags with its --policy file (file "": none):
// the default sandbox and the sandboxes by adapter name.
func (o *sandboxOpts) serverPolicy(file string) (*platform.Sandbox, map[string]*platform.Sandbox, error) {
	sandbox, err := o.policy()
	if err != nil || file == "" {
		return sandbox, nil, err
	}
	pol, err := readPolicy(file)
	if err != nil {
		return nil, nil, err
	}
	if pol.hasDef {
		if sandbox != nil {
			return nil, nil, usagef("--policy %s has an \"adapter *\" section: --sandbox and --allow-* would conflict with it", file)
		}
		sandbox = pol.dflt
	}
	return sandbox, pol.byName, nil
}
