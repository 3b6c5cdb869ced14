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
//     the group ([Tree.Verify] then returns an [*UnverifiedError]); a sandboxed adapter
//     there runs below a reaper of its own instead ([MechReaper]), which can. [Resources]
//     are applied through the cgroup (v2, or v1 where v2 lacks the controller).
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
// filter, no capabilities), applied by a launcher stage, never by a thread of the host:
// the host's own binary, re-executed through /proc/self/exe with a private argv that
// the init of platform/internal/launch recognises before main runs. It drops every
// capability, enforces the ruleset and the filter, closes every descriptor but the
// adapter's and executes the adapter; a step that fails is a [*SandboxError] from Start.
// The host binary must stay executable through /proc/self/exe, and the package
// initialisers Go runs before that one run in the launcher too. SECURITY.md and
// docs/containment.md in the repository say what the sandbox grants, what it cannot,
// and what it asks of a host binary; an unsandboxed start uses no launcher.
//
// docs/supervision.md in the repository explains each mechanism per operating system:
// what it closes, what it cannot, how the tests measured it, and what a running tree
// costs the host (the spawner goroutine, which ends when no adapter is left, is
// "platform.spawnLoop" for goleak).
package platform
