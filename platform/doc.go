// Package platform starts an adapter's process and supervises the whole tree of
// processes it creates, per operating system. It knows nothing of the protocol: it hands
// out the adapter's stdin and stdout and proves, where the system allows, that nothing
// of the tree is left (R63, R64).
//
// The intended use (package lifecycle) is: [Start] a tree, give [Tree.Stdin] and
// [Tree.Stdout] to a protocol connection; to stop, close stdin, wait up to the
// disconnect grace for [Tree.Exited], then [Tree.Kill], then [Tree.Verify] within the
// cleanup bound, then [Tree.Close]. A host calls [Sweep] once at start-up to remove what
// a crashed predecessor left behind.
//
// # Launch rules
//
// The executable is named by an absolute path, never resolved and never run through a
// shell; arguments are passed verbatim (R61, A31). On Windows only an explicit .exe is
// started (R62). The environment is exactly [Config.Env] (nil means empty). Standard
// error goes to the null device unless [Config.Stderr] asks for it (R8, A27). Refusals
// are *[LaunchError] with sentinel causes ([ErrNotAbsolute], [ErrNotFound], ...).
//
// # Pinned executables
//
// [Config.Digest] pins the executable to a SHA-256, checked at every Start on the bytes
// that are executed, not on a path that may name another file by the time of the exec:
//
//   - Linux: the file is opened once and hashed through that descriptor; its bytes
//     are copied into a sealed memory file (memfd_create, sealed against writes,
//     growing, shrinking and further seals, as runc does against CVE-2019-5736), the
//     copy is hashed again, and the start executes the copy (execve of
//     /proc/self/fd/N): neither a file renamed over the path nor the same file written
//     in place — even at the same size with its modification time put back — can
//     change what runs. One sealed copy is kept per digest (up to 16 digests; it costs
//     RAM the size of the file) and shared by later starts, which only hash the file
//     and take a descriptor of the copy; a file that changed between its hash and the
//     copy fails the start with a *DigestMismatchError. A native executable gets
//     nothing of it (a close-on-exec descriptor). A #! script's interpreter opens the
//     script by path after the exec, so the sealed copy is passed as the adapter's fd 3
//     and the interpreter is given /proc/self/fd/3 as the script's path (argv[0]): it
//     reads the sealed bytes, never the file. A script that finds files next to itself
//     must use its working directory ([Config.Dir], by default the script's directory)
//     instead. The adapter's name in /proc/PID/comm (ps -o comm) is the descriptor
//     number; its command line keeps Path. /proc must be mounted.
//   - Windows: the file is opened for hashing with read sharing only and held open until
//     CreateProcess has returned: nobody can write, delete or rename it in between.
//   - macOS and the other BSD-like systems: the opened file is hashed, but the exec is
//     by path (no fexecve, no sealed memory files): a file renamed over the path in
//     between would run. A file written in place between hash and exec is detected
//     after the exec by its size and modification time, and the tree is killed before
//     Start returns; but an owner who keeps the size and puts the modification time
//     back is not seen, nor a script rewritten while its interpreter reads it. Keep
//     adapter files and directories writable only by their owner.
//
// # Linux
//
// Strongest first, combined where possible. Every [Start] decides afresh, from cheap
// probes (the capability set, access(2) on the cgroup directory, the clone itself),
// and remembers nothing: a failure weakens only the adapter it happened to.
// [Tree.Supervision] reports the mechanisms in effect and, for each stronger one that
// is not, why ("not writable by uid 1000", "turned off by Config.Isolation", the
// clone's error and the sysctl behind it).
//
//   - cgroup v2: each adapter is started straight into its own cgroup
//     (clone3 CLONE_INTO_CGROUP) named adapterkit-<host pid>-<host start time>-<seq>,
//     under [Config.CgroupParent] or else the host's own cgroup; the cgroup2 mount is
//     found in /proc/self/mountinfo. That parent must be writable by the host (root,
//     or a subtree delegated to its uid: a systemd unit with Delegate=yes, a user
//     service under user@.service, a container with its own cgroup namespace), which
//     is checked, not assumed. Kill writes cgroup.kill; proof is "populated 0" in
//     cgroup.events (inotify wake-ups plus polling with backoff); Close removes it.
//     Resources are applied through memory.max and pids.max when the parent delegates
//     those controllers. When cgroups cannot be created (permission, read-only, no
//     cgroup2) the next mechanism is used.
//   - cgroup v1, for Resources only: where cgroup2 lacks the memory or pids controller
//     (hybrid hierarchies) and a writable v1 hierarchy has it, the adapter gets a v1
//     cgroup of the same name under the host's own v1 cgroup, with
//     memory.limit_in_bytes (and memory.memsw.limit_in_bytes, so swap cannot dodge it)
//     or pids.max. It is born inside: the spawner thread enters the v1 cgroups just
//     before the fork and leaves right after (v1 membership is per thread and inherited
//     by a fork), the limits relaxed while it is a member so that the host never hits
//     them. A limit applied by neither is reported by [Tree.LimitErr] (the process
//     still starts). [Tree.LimitHit] tells, from the memory cgroup's oom_kill counter,
//     that the kernel killed part of the tree at its memory limit ([ErrMemoryLimit]);
//     at the process limit a fork fails with EAGAIN and the adapter lives on.
//   - PID namespace ([IsolationAuto]): the adapter is process 1 of a new namespace, so
//     when it exits or is killed the kernel kills every process of the namespace,
//     including double-forked setsid daemons, and reaping it proves they are gone. A
//     host with CAP_SYS_ADMIN creates it directly; any other host creates it inside a
//     new user namespace that maps the host's uid and gid to themselves
//     ([MechUserNamespace]), which unprivileged users may do unless the system forbids
//     it (user.max_user_namespaces = 0, kernel.unprivileged_userns_clone = 0, AppArmor's
//     restriction on recent Ubuntu releases). See [Isolation] for what it means for the
//     adapter, and for turning either namespace off.
//   - Parent-death signal: every adapter gets PR_SET_PDEATHSIG=SIGKILL, and is forked
//     by one goroutine locked to its OS thread for as long as any adapter lives
//     (golang/go#27505), so a host that dies, even by SIGKILL, kills its adapters; in a
//     PID namespace that takes the whole tree.
//   - Process group: the adapter leads a new group; without a cgroup or PID namespace
//     Kill signals the group and every descendant a walk of /proc finds. That cannot
//     see a descendant that called setsid and whose parent exited before a walk (A25),
//     so Verify then always returns *[UnverifiedError]. A host may choose to become a
//     child subreaper ([HostOptions].ChildSubreaper, process-wide), so that such
//     descendants are re-parented to it instead of init: visible and killable, still
//     without proof.
//
// What each mechanism closes, as measured by this package's tests on Linux 6.18 (as
// root, and as nobody re-executed from root): Kill+Verify ends a tree with a
// double-forked setsid grandchild with cgroup, with PID namespace, and as nobody with a
// user+PID namespace or a delegated cgroup; the process-group fallback misses that
// grandchild and says unverified. A host killed with SIGKILL leaves nothing with a PID
// namespace, privileged or in a user namespace (pdeathsig kills the namespace's init,
// which takes the namespace down); with a cgroup but no namespace the adapter dies
// (pdeathsig) but its descendants stay in the cgroup until [Sweep] ends them; with only
// a process group they survive.
//
// Unless the host sets [HostOptions].KeepInheritedFDs, Start also marks descriptors the
// host inherited without close-on-exec (fd >= 3) close-on-exec, a process-wide change
// reported by [MarkedCloseOnExec] (and logged at Info level): otherwise they would leak
// into every adapter. Descriptors passed with exec.Cmd.ExtraFiles are unaffected.
//
// The spawner goroutine ends when no adapter is left; tests using goleak that end with
// adapters still running should ignore "platform.spawnLoop".
//
// # Windows
//
// Each adapter runs in its own job object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and no
// breakaway; the handle is not inheritable, so a dying host closes it and the kernel
// ends the tree. The process is created suspended and inside the job
// (PROC_THREAD_ATTRIBUTE_JOB_LIST, Windows 10+; before that it is assigned before its
// main thread is resumed), inheriting only its three standard handles, with no console
// window (CREATE_NO_WINDOW). Kill is TerminateJobObject; proof is ActiveProcesses == 0
// in JobObjectBasicAccountingInformation, polled with backoff. Resources become
// JobMemoryLimit and ActiveProcessLimit. An adapter started with an empty environment
// lacks SystemRoot, which some Windows APIs (e.g. Winsock) need: pass what it needs in
// [Config.Env]. Sweep has nothing to do.
//
// Windows limits: a process of the job that creates a child with
// PROC_THREAD_ATTRIBUTE_PARENT_PROCESS naming a process outside the job (Go's
// SysProcAttr.ParentProcess) gives that child the other parent's job, and a process
// created through WMI (Win32_Process.Create) is created by the WMI service, outside the
// job: such processes escape, and ActiveProcesses == 0 then reports the tree gone while
// they run. A restricted token that could not open processes outside the job was
// considered and not used: it changes what the adapter may do with its own files and
// services (deny-only groups, no privileges) in ways adapters written for the user's
// normal rights do not expect, and it would not stop the WMI path, which runs with the
// WMI service's own rights on the user's behalf. Pipes are created non-inheritable, so
// C code in the host calling CreateProcess with bInheritHandles cannot take the
// adapter's pipe ends. A host that itself runs in a job with UI limits cannot nest the
// adapter's job: the adapter breaks away from the host's job where that job allows it,
// and is otherwise refused with [ErrJobNesting].
//
// # macOS
//
// The adapter leads its own process group. Kill signals the adapter, the group (only
// while the adapter is unreaped, so its id cannot name another group) and every
// descendant found by parent pid in sysctl kern.proc.all, in bounded rounds; processes
// are remembered by pid and start time, so a re-parented one is still found and a
// recycled pid is never signalled. Verify waits (kqueue NOTE_EXIT wake-ups) until the
// adapter is reaped and no process of the tree a scan can find runs, and then still
// returns *[UnverifiedError] (R63): a descendant that leaves the group (setsid,
// setpgid) and whose parent exits before a scan sees it is re-parented to launchd and
// cannot be told from any other process. Adapters should exit on stdin EOF (R49), which
// also covers a host that dies. Descriptors the host inherited without close-on-exec
// are marked close-on-exec as on Linux. Resources are not supported; Sweep has nothing
// to do.
package platform
