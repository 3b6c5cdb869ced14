// Package platform starts an adapter's process and supervises the whole tree of
// processes it creates, per operating system. It knows nothing of the protocol: it hands
// out the adapter's stdin and stdout and proves, where the system allows, that nothing
// of the tree is left.
//
// In the module's layers it sits above runtime and plugin and below lifecycle, yet
// depends on neither end of a connection nor on lifecycle: it imports only the shared
// internal packages and its own launcher stage (platform/internal/launch).
//
// The intended use (package lifecycle) is: [Start] a tree, give [Tree.Stdin] and
// [Tree.Stdout] to a protocol connection; to stop, close stdin, wait up to the
// disconnect grace for [Tree.Exited], then [Tree.Kill], then [Tree.Verify] within the
// cleanup bound, then [Tree.Close]. A host calls [Sweep] once at start-up to remove what
// a crashed predecessor left behind.
//
// The executable is named by an absolute path, never resolved and never run through a
// shell; arguments are passed verbatim. On Windows only an explicit .exe is started.
// The environment is exactly [Config.Env] (nil means empty). Standard error goes to the
// null device unless [Config.Stderr] asks for it. Refusals are a [*LaunchError] with a
// sentinel cause ([ErrNotAbsolute], [ErrNotFound], ...). [Config.Digest] pins the
// executable to a SHA-256, checked at every Start on the bytes that are executed.
//
// The mechanisms, strongest first, combined where possible; [Tree.Supervision] reports
// those in effect and, for each stronger one that is not, why:
//
//   - Linux: a cgroup v2 per adapter (kill with cgroup.kill, proof from
//     cgroup.events), a PID namespace (inside a user namespace for an unprivileged
//     host; see [Isolation]), a parent-death signal, and as the last resort a process
//     group plus a walk of /proc, which cannot prove the end of a descendant that left
//     the group ([Tree.Verify] then returns an [*UnverifiedError]). [Resources] are
//     applied through the cgroup (v2, or v1 where v2 lacks the controller).
//   - Windows: a job object per adapter with kill-on-close, the process created
//     suspended inside it; proof is the job's process count reaching zero.
//   - macOS: a process group plus a walk of the process table; the end of a tree is
//     never proven, so Verify always returns an [*UnverifiedError].
//
// Every Start decides afresh from cheap probes and remembers nothing: a failure weakens
// only the adapter it happened to. Process-wide choices are the host's, made with
// [SetHostOptions] (becoming a child subreaper; keeping inherited descriptors that lack
// close-on-exec, which Start otherwise marks close-on-exec and reports with
// [MarkedCloseOnExec]).
//
// [Config.Sandbox] opts one adapter into least privilege (Linux: Landlock, a seccomp
// filter, no capabilities); SECURITY.md in the repository says what it grants and what
// it cannot. The sandbox is applied by a launcher stage, never by a thread of the host:
// the host's own binary, re-executed through /proc/self/exe with the private argv
// "adapterkit-sandbox-launcher launch-v1" and the launch descriptors 4 to 8, which the
// init of the internal package it imports for that (platform/internal/launch, with few
// dependencies, so Go initialises it early) recognises before main runs. It
// drops every capability, sets no_new_privs, enforces the Landlock ruleset, installs the
// seccomp filter, closes every descriptor but the adapter's, and executes the adapter
// in its place; a step that fails is a [*SandboxError] from Start. Consequences for a
// host binary: it must stay executable through /proc/self/exe (/proc mounted), and the
// package initialisers Go runs before that one (its standard-library dependencies, and
// packages that do not import it and that Go orders first) run in the launcher too, with
// the adapter's standard files: they must not write to standard output or have effects
// outside the process. Invoked by hand with that argv and without the descriptors, the
// binary reports a malformed specification and exits with status 127. An unsandboxed
// start uses no launcher.
//
// The spawner goroutine ends when no adapter is left; tests using goleak that end with
// adapters still running should ignore "platform.spawnLoop".
//
// A running tree costs the host two goroutines and no OS thread: one copies standard
// error (with a 512-byte buffer, a larger pooled one only while the adapter writes
// faster), the other waits for the direct child to exit — on Linux on a pidfd in the
// runtime's poller, which takes one more descriptor per tree; where pidfds are not
// available, in waitid, which holds a thread.
//
// docs/supervision.md in the repository explains each mechanism per operating system:
// what it closes, what it cannot, and how the tests measured it.
package platform
