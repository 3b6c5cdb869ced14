package platform

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// How a sandbox is applied to the adapter only. Landlock domains, seccomp filters,
// no_new_privs and capabilities belong to a thread and pass to the program it executes;
// Go runs no code of ours between fork and exec. So a sandboxed start executes, instead
// of the adapter, a short-lived launcher stage: the host's own binary (/proc/self/exe),
// recognised from a private argv by the init of package platform/internal/launch, which
// platform imports and which Go initialises early (few dependencies). The
// spawner thread forks it exactly as it forks an unsandboxed adapter — same namespaces,
// cgroup (v2 or v1), process group and parent-death signal — and the launcher, on its
// main thread, drops every capability (bounding set and secure bits included), sets
// no_new_privs, enforces the Landlock ruleset the host built and passed as a descriptor,
// marks every descriptor but the adapter's close-on-exec, installs the seccomp filter
// and executes the adapter, which so keeps the launcher's pid and parent. A failed step
// is written to a close-on-exec status pipe the host reads until its end (Go's own exec
// does the same), and Start returns it as a *SandboxError.
//
// No thread of the host is ever restricted, so none shares the adapter's Landlock
// domain: Landlock's signal scope keeps the adapter from signalling any of them, and
// each adapter has a domain of its own. Because the forking thread is unrestricted, a
// sandboxed adapter in a user namespace gets the same identity mapping as any other
// (it sees its real uid and gid); the capabilities that a root host's adapter holds in
// that namespace are dropped by the launcher with the rest.
//
// A start with neither cgroup v2 nor PID namespace (process-group mode) is the
// exception: there the launcher stays, as the adapter's reaper (reaper_linux.go). Its
// main thread is never restricted; one locked thread applies the same steps to itself
// alone, forks and executes the adapter, and ends with its restrictions.
//
// The launcher costs one more exec of the host binary per sandboxed start (measured by
// BenchmarkStartContained); an unsandboxed start does not use it. A separate helper
// binary was not chosen: it would have to be installed beside every host.

// sandboxPlan is what one sandboxed start enforces, prepared before the fork.
type sandboxPlan struct {
	rulesFile *os.File         // the Landlock ruleset; nil: no Landlock
	filter    []unixSockFilter // nil: no seccomp
	spec      *os.File         // the launch specification, once written (launch_linux.go)
	// specReaper is the Reaper flag spec was written with.
	specReaper bool
	// scope: Landlock's signal scope is enforced (ABI 6), with the ruleset.
	scope   bool
	tmp     string    // the private temporary directory
	env     []string  // the adapter's environment, with TMPDIR
	mech    Mechanism // MechLandlock and/or MechSeccomp
	desc    string    // what is enforced, for Supervision.Sandbox
	derived []string  // grants derived from the executable, for Supervision.Derived
	dropped []Dropped // what is not, with BestEffort
}

type unixSockFilter = unix.SockFilter

// planSandbox prepares the enforcement of cfg.Sandbox for a start of cfg, or says what
// cannot be enforced.
func planSandbox(cfg *Config) (*sandboxPlan, error) {
	s := cfg.Sandbox
	p := &sandboxPlan{}
	var missing []string // everything not enforceable
	var llGaps []Dropped // the Landlock rights among it (llgaps_linux.go)
	abi, llErr := landlockABI()
	tcp := !s.Network && abi >= 4
	scope := abi >= 6
	if llErr != nil {
		missing = append(missing, llErr.Error())
	} else {
		llGaps = landlockGaps(abi, s)
	}
	for _, g := range llGaps {
		missing = append(missing, g.Reason)
	}
	filter, ndenied, scErr := seccompFilter(s)
	if scErr == nil {
		scErr = seccompAvailable()
	}
	if scErr != nil {
		missing = append(missing, scErr.Error())
	}
	if len(missing) > 0 && !s.BestEffort {
		return nil, fmt.Errorf("%w: the sandbox cannot be enforced: %s (Sandbox.BestEffort starts the adapter without it)", errors.ErrUnsupported, strings.Join(missing, "; "))
	}
	execs, reads, derived, err := execChain(cfg)
	if err != nil {
		return nil, err
	}
	defer closeGrants(execs, reads)
	p.derived = derived
	if p.tmp, err = os.MkdirTemp("", "adapterkit-sandbox-"); err != nil {
		return nil, fmt.Errorf("creating the sandbox's temporary directory: %w", err)
	}
	p.env = slices.Clone(cfg.env())
	if !slices.ContainsFunc(p.env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }) {
		p.env = append(p.env, "TMPDIR="+p.tmp)
	}
	var parts []string
	if llErr == nil {
		rules, err := buildRuleset(cfg, abi, tcp, scope, p.tmp, execs, reads)
		if err != nil {
			p.release()
			return nil, err
		}
		p.rulesFile = os.NewFile(uintptr(rules.fd), "landlock-ruleset")
		p.mech, p.scope = p.mech|MechLandlock, scope
		feats := []string{"fs"}
		if tcp {
			feats = append(feats, "tcp")
		}
		if scope {
			feats = append(feats, "scope")
		}
		parts = append(parts, fmt.Sprintf("landlock v%d: %s", abi, strings.Join(feats, ", ")))
	} else {
		p.dropped = append(p.dropped, Dropped{Mechanism: MechLandlock, Reason: llErr.Error() + ": files, TCP ports and signals are not restricted"})
	}
	if scErr == nil {
		p.filter, p.mech = filter, p.mech|MechSeccomp
		parts = append(parts, fmt.Sprintf("seccomp: %d syscalls denied, %d checked by argument, sockets %s", ndenied, len(argRules(s)), socketsString(s)))
	} else {
		p.dropped = append(p.dropped, Dropped{Mechanism: MechSeccomp, Reason: scErr.Error() + ": socket families and the refused system calls are not filtered"})
	}
	p.dropped = append(p.dropped, llGaps...)
	parts = append(parts, "net "+s.netString())
	p.desc = strings.Join(parts, "; ")
	return p, nil
}

// socketsString describes which sockets the filter lets the adapter create.
func socketsString(s *Sandbox) string {
	switch {
	case s.Network:
		return "unfiltered"
	case len(s.ConnectPorts) > 0 && s.UnixSockets:
		return "unix, tcp"
	case len(s.ConnectPorts) > 0:
		return "tcp only"
	case s.UnixSockets:
		return "unix only"
	}
	return "none"
}

// buildRuleset creates the Landlock ruleset of the policy: the exec chain's grants
// (execChain), the default locations and the policy's Read and Write paths
// (defaultGrants), each added by the descriptor it was checked on.
func buildRuleset(cfg *Config, abi int, tcp, scope bool, tmp string, execs, reads []grant) (*ruleset, error) {
	s := cfg.Sandbox
	r, err := newRuleset(abi, tcp, scope)
	if err != nil {
		return nil, err
	}
	others, err := defaultGrants(s, tmp)
	defer closeGrants(others)
	for _, l := range [][]grant{execs, reads, others} {
		for _, g := range l {
			if err == nil {
				err = r.addGrant(g)
			}
		}
	}
	if tcp {
		for _, port := range s.ConnectPorts {
			if err == nil {
				err = r.addConnectPort(port)
			}
		}
	}
	if err != nil {
		r.close()
		if errors.As(err, new(*SandboxPathError)) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: sandbox policy: %w", ErrInvalidConfig, err)
	}
	return r, nil
}

// chainLink is one program of an adapter's exec chain, as a "#!" line or PT_INTERP
// names it.
type chainLink struct {
	path   string
	onPath bool // found by env(1)'s search of the adapter's PATH for a bare name
}

// execChain opens the programs the adapter must be able to execute — itself, the
// interpreters of its "#!" line (through /usr/bin/env), the dynamic loaders they name —
// and the installation prefixes of interpreters kept outside the system directories,
// each once and without following symbolic links (grantpath_linux.go). Programs granted
// by Sandbox.Exec get their interpreters and loaders the same way. The caller closes
// the grants.
//
// What the adapter's own file names can only choose among what the host already
// trusts, so that a "#!" line cannot widen the grants: an interpreter or loader that is
// not beneath a Sandbox.Exec path must be a system program (systemFile, on the
// descriptor, and every directory above it, on the walk's descriptors), reached only
// through symbolic links of root (resolveTrusted), or the start is refused; and an
// installation prefix becomes readable only for an interpreter that env(1) found by its
// bare name on the adapter's PATH (Config.Env, the host's choice), never for a path
// written in the file. derived lists what was granted that way.
func execChain(cfg *Config) (execs, reads []grant, derived []string, err error) {
	defer func() {
		if err != nil {
			closeGrants(execs, reads)
			execs, reads = nil, nil
		}
	}()
	envPath := "/bin:/usr/bin" // what env(1) searches when PATH is not set
	for _, kv := range cfg.env() {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			envPath = v
		}
	}
	policy := cfg.Sandbox.Exec
	var queue []chainLink
	follow := func(g *grant) error {
		f, err := g.reopen()
		if err != nil {
			return fmt.Errorf("%w: sandbox: %w", ErrInvalidConfig, err)
		}
		defer f.Close()
		next, err := interpretersOf(f, g.path, envPath)
		if err != nil {
			return fmt.Errorf("%w: sandbox: %w", ErrInvalidConfig, err)
		}
		queue = append(queue, next...)
		return nil
	}
	own, err := openOwn(cfg.Path)
	if err != nil {
		return nil, nil, nil, err
	}
	execs = append(execs, own)
	seen := []string{own.path}
	if err := follow(&own); err != nil {
		return execs, reads, nil, err
	}
	for _, p := range policy {
		g, err := openPolicy("Exec", p, llExec)
		if errors.As(err, new(*SandboxPathError)) {
			return execs, reads, nil, err
		} else if err != nil {
			return execs, reads, nil, fmt.Errorf("%w: sandbox policy: %w", ErrInvalidConfig, err)
		}
		execs = append(execs, g)
		if g.isRegular() && !slices.Contains(seen, g.path) {
			seen = append(seen, g.path)
			if err := follow(&g); err != nil {
				return execs, reads, nil, err
			}
		}
	}
	refuse := func(link chainLink, why error) error {
		return fmt.Errorf("%w: sandbox: %s is named as an interpreter or loader, and %v: "+
			"a sandbox derives grants for system programs only (grant it with Sandbox.Exec)", ErrInvalidConfig, link.path, why)
	}
	for n := 0; len(queue) > 0; n++ {
		link := queue[0]
		queue = queue[1:]
		if n > 8+len(policy) {
			return execs, reads, nil, fmt.Errorf("%w: sandbox: more than 8 interpreters chained from %s", ErrInvalidConfig, cfg.Path)
		}
		if !filepath.IsAbs(link.path) {
			return execs, reads, nil, refuse(link, errors.New("it is not an absolute path"))
		}
		// Beneath a Sandbox.Exec path, links are the host's to choose; elsewhere only
		// root's are followed. Either way the target is checked on its descriptor below.
		var real string
		var rerr error
		if underAny(policy, link.path) {
			real, rerr = filepath.EvalSymlinks(link.path)
		} else {
			real, rerr = resolveTrusted(link.path)
		}
		if rerr != nil {
			return execs, reads, nil, refuse(link, rerr)
		}
		if slices.Contains(seen, real) {
			continue
		}
		seen = append(seen, real)
		covered := underAny(policy, real) // the policy's own Exec rule grants it
		prefix := ""
		if link.onPath {
			prefix = interpreterPrefix(real)
		}
		g, pre, sysErr, oerr := openProgram(real, prefix)
		if oerr != nil {
			return execs, reads, nil, refuse(link, oerr)
		}
		if !g.isRegular() {
			unix.Close(g.fd)
			if pre.fd >= 0 {
				unix.Close(pre.fd)
			}
			return execs, reads, nil, refuse(link, fmt.Errorf("%s is not a regular file", real))
		}
		if !covered && sysErr != nil {
			unix.Close(g.fd)
			if pre.fd >= 0 {
				unix.Close(pre.fd)
			}
			return execs, reads, nil, refuse(link, sysErr)
		}
		if pre.fd >= 0 && sysErr == nil {
			reads = append(reads, pre)
			derived = append(derived, "read "+pre.path)
		} else if pre.fd >= 0 {
			unix.Close(pre.fd)
		}
		ferr := follow(&g)
		if covered {
			unix.Close(g.fd)
		} else {
			execs = append(execs, g)
			derived = append(derived, "exec "+real)
		}
		if ferr != nil {
			return execs, reads, nil, ferr
		}
	}
	return execs, reads, derived, nil
}

// underAny reports whether path is one of dirs or beneath one.
func underAny(dirs []string, path string) bool {
	for _, d := range dirs {
		d = filepath.Clean(d)
		if path == d || strings.HasPrefix(path, d+"/") || d == "/" {
			return true
		}
	}
	return false
}

// interpreterPrefix is the installation prefix of an interpreter in a "bin" directory
// outside the system directories (pyenv, nvm, /opt/...): the parent of that "bin". It
// is never "/", "/usr", "/usr/local", "/home", "/root" or a user's home directory.
func interpreterPrefix(real string) string {
	dir := filepath.Dir(real)
	if filepath.Base(dir) != "bin" {
		return ""
	}
	prefix := filepath.Dir(dir)
	for _, sys := range []string{"/", "/usr", "/usr/local", "/home", "/root"} {
		if prefix == sys {
			return ""
		}
	}
	if isHomeDir(prefix) {
		return ""
	}
	return prefix
}

// isHomeDir reports whether dir is the home directory of an account in /etc/passwd.
func isHomeDir(dir string) bool {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Split(line, ":"); len(f) >= 6 && filepath.Clean(f[5]) == dir {
			return true
		}
	}
	return false
}

// interpretersOf reads the start of the executable f (at path) and returns what the
// kernel will execute for it: for a "#!" script its interpreter (and, for
// "/usr/bin/env NAME", also the program NAME names: a path as it is, a bare name on
// envPath, as env(1) finds it); for a dynamically linked ELF file its loader (PT_INTERP).
func interpretersOf(f *os.File, path, envPath string) ([]chainLink, error) {
	head := make([]byte, 4)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, nil // too short to be either: the kernel decides
	}
	if bytes.Equal(head, []byte(elf.ELFMAG)) {
		ef, err := elf.NewFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for _, prog := range ef.Progs {
			if prog.Type == elf.PT_INTERP {
				if prog.Filesz == 0 || prog.Filesz > unix.PathMax {
					// The kernel refuses such a file too; never allocate what a header claims.
					return nil, fmt.Errorf("%s: PT_INTERP of %d bytes", path, prog.Filesz)
				}
				b := make([]byte, prog.Filesz)
				if _, err := prog.ReadAt(b, 0); err != nil {
					return nil, fmt.Errorf("%s: PT_INTERP: %w", path, err)
				}
				return []chainLink{{path: string(bytes.TrimRight(b, "\x00"))}}, nil
			}
		}
		return nil, nil
	}
	if head[0] != '#' || head[1] != '!' {
		return nil, nil
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return nil, fmt.Errorf("%s: unreadable #! line: %w", path, err)
	}
	fields := strings.Fields(strings.TrimPrefix(strings.TrimSuffix(line, "\n"), "#!"))
	if len(fields) == 0 {
		return nil, fmt.Errorf("%s: empty #! line", path)
	}
	interp := fields[0]
	if filepath.Base(interp) != "env" || len(fields) < 2 {
		return []chainLink{{path: interp}}, nil
	}
	name := fields[1]
	if strings.HasPrefix(name, "-") {
		return nil, fmt.Errorf("%s: #!%s %s: env options are not followed; name the interpreter directly or grant it with Sandbox.Exec", path, interp, name)
	}
	if strings.Contains(name, "/") {
		return []chainLink{{path: interp}, {path: name}}, nil
	}
	for _, dir := range filepath.SplitList(envPath) {
		if dir == "" {
			continue
		}
		cand := filepath.Join(dir, name)
		if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return []chainLink{{path: interp}, {path: cand, onPath: true}}, nil
		}
	}
	return nil, fmt.Errorf("%s: #!%s %s: %s is not on the adapter's PATH (%s)", path, interp, name, name, envPath)
}

// closeRules closes the ruleset and the launch specification once no more launchers
// will be started with them.
func (p *sandboxPlan) closeRules() {
	for _, f := range []**os.File{&p.rulesFile, &p.spec} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
}

// release removes the temporary directory; called once the adapter is reaped (or was
// never started).
func (p *sandboxPlan) release() {
	p.closeRules()
	if p.tmp != "" {
		_ = os.RemoveAll(p.tmp)
	}
}

// sandboxPreflight has nothing to refuse early on Linux: osStart plans the sandbox.
func sandboxPreflight(*Config) (*Dropped, error) { return nil, nil }

// sandboxSystemPaths are the system locations every sandboxed adapter may read (not
// write): the directories holding programs and libraries, the few files under /etc that
// the dynamic loader, libc's name service and time zone code, and TLS libraries read,
// and the devices runtimes read for zeros and randomness. Paths that do not exist on a
// system are skipped. SECURITY.md lists them; keep the two in step.
var sandboxSystemPaths = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
	"/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/hosts", "/etc/host.conf",
	"/etc/resolv.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols",
	"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ca-certificates", "/etc/pki/tls/certs",
	"/dev/zero", "/dev/urandom", "/dev/random",
}

// netString describes the network grant: "none", "all", "tcp connect 80,443".
func (s *Sandbox) netString() string {
	switch {
	case s.Network:
		return "all"
	case len(s.ConnectPorts) == 0:
		return "none"
	}
	ports := make([]string, len(s.ConnectPorts))
	for i, p := range s.ConnectPorts {
		ports[i] = strconv.Itoa(int(p))
	}
	return "tcp connect " + strings.Join(ports, ",")
}
