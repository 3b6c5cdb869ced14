// Package discovery finds adapters in directories, selects one by name and
// version constraint, and checks a file against a pinned SHA-256.
//
// In the module's layers it sits above lifecycle and below registry, yet depends on
// neither lifecycle nor platform, since finding files starts nothing: it imports only
// the shared internal packages (pins, sentinels).
//
// # Convention
//
// An adapter is a file directly inside a scanned directory (subdirectories are
// not searched) whose name is
//
//	NAME_vVERSION        on every OS but Windows
//	NAME_vVERSION.exe    on Windows (".exe" in any letter case)
//
// where NAME is 1 to 64 bytes of lower-case ASCII letters, digits and '-',
// starting with a letter or digit (regexp ^[a-z0-9][a-z0-9-]*$), and VERSION
// is strict SemVer 2.0.0 without a "v" prefix — MAJOR.MINOR.PATCH without
// leading zeros, optionally -PRERELEASE and +BUILD — that
// github.com/hashicorp/go-version also accepts: "thermo_v1.2.3",
// "thermo_v2.0.0-beta.1", "modbus-tcp_v0.4.0.exe". Which rule applies is
// Options.GOOS (default runtime.GOOS), so a host can check a directory meant
// for another OS.
//
// Scan examines every entry of each directory, dotfiles included, and takes
// it or reports it in Result.Rejected; nothing is skipped silently. The rules
// are applied in this order and the first that fails is the reason:
//
//  1. Unreadable: the entry (or the end of its link chain) cannot be stat-ed.
//  2. LinkLeavesDir: a symbolic link is followed only when every hop of its
//     chain and the fully resolved file lie inside the scanned directory.
//  3. NotRegular: the file (after links) must be a regular file; a
//     subdirectory is reported here.
//  4. BadName, BadVersion, WrongOSExtension: the naming convention above (see
//     ParseFileName for how ".exe" is split off).
//  5. WorldWritable, GroupWritable, UntrustedOwner: the scanned directory,
//     any directory a link leads through below it, and the file must be
//     writable by their owner alone, and that owner must be the host's user
//     (its effective uid) or root. A directory that fails rejects all its
//     adapters, sticky bit or not. The first of the three that applies, on
//     the first of those paths that fails (scanned directory, link
//     directories, file), is the reason. Options.AllowGroupWritable relaxes
//     the last two for the scanned directory's group (see Security).
//  6. NotExecutable: at least one execute permission bit must be set.
//  7. Duplicate: the first adapter with a given NAME and VERSION (directories
//     in argument order, entries in lexical order; build metadata ignored)
//     wins; later ones are rejected.
//
// Rules 5 and 6 read permission bits and owners and therefore follow the OS
// actually running, not Options.GOOS; on Windows, where Go reports no
// meaningful bits, they are skipped (ACLs and owners are not inspected) and the
// ".exe" suffix is what makes a file executable.
//
// An Adapter's package directory (Adapter.Dir) is the scanned directory that
// contains it: what a host keeps reserved (not deleted or replaced) while a
// process started from it may still run. Links are only taken when they
// resolve inside it, so it covers the real file too.
//
// # Selecting
//
// ParseRef reads "NAME" or "NAME@CONSTRAINTS" (go-version constraint syntax:
// "thermo@~> 1.2", "x@>= 2, < 3", "x@1.4.0"); Result.Select returns the newest
// eligible version. Pre-release versions are left out unless the constraint
// itself names a pre-release (go-version's rule: then only pre-releases of
// that same MAJOR.MINOR.PATCH match) or SelectOptions.Prerelease is set (then a
// pre-release is eligible when its MAJOR.MINOR.PATCH satisfies the
// constraints).
//
// # Security
//
// Scan refuses files that someone other than the host's user or root could
// replace through permission bits or ownership: the file, the scanned
// directory, and the directories between them that a link leads through. It
// does not inspect the directories above the scanned one (keep those writable
// only by their owner too: whoever may rename a parent can swap the whole
// directory), nor ACLs.
//
// Options.AllowGroupWritable is meant for a directory that several users of
// one group install adapters into (for example root:deploy with mode 2775): it
// takes group-writable files and directories, and files owned by other users,
// when their group is the scanned directory's group. Every member of that
// group can then put a program of their choosing in the host's place: only use
// it when every member may run code as the host's user.
//
// Scan is a snapshot: the file system can change between Scan and the exec
// that follows it, which are separate steps (time of check to time of use). A
// pin checked at the start itself (platform.Config.Digest, used by
// registry.Config.Pins at every start and restart) is bound to the executed
// bytes instead; see package platform for what each system guarantees.
package discovery
