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
// not searched) named NAME_vVERSION (NAME_vVERSION.exe on Windows): NAME is 1 to 64
// bytes of lower-case ASCII letters, digits and '-', starting with a letter or digit;
// VERSION is strict SemVer 2.0.0 without a "v" prefix ("thermo_v1.2.3",
// "thermo_v2.0.0-beta.1", "modbus-tcp_v0.4.0.exe"). Which rule applies is
// Options.GOOS (default runtime.GOOS), so a host can check a directory meant for
// another OS.
//
// [Scan] examines every entry of each directory, dotfiles included, and takes it or
// reports it in Result.Rejected with a [Reason]; nothing is skipped silently. The
// rules, in order: the entry can be stat-ed; a symbolic link resolves inside the
// scanned directory; the file is regular; its name follows the convention; the
// directory, the directories a link leads through and the file are writable by their
// owner alone, who is the host's user or root (Options.AllowGroupWritable relaxes
// that for the scanned directory's group); an execute bit is set; no earlier adapter
// has the same NAME and VERSION. On Windows the permission rules are skipped and
// ".exe" makes a file executable.
//
// An Adapter's package directory (Adapter.Dir) is the scanned directory that
// contains it: what a host keeps reserved (not deleted or replaced) while a
// process started from it may still run.
//
// # Selecting
//
// [ParseRef] reads "NAME" or "NAME@CONSTRAINTS" (go-version constraint syntax:
// "thermo@~> 1.2", "x@>= 2, < 3"); [Result.Select] returns the newest eligible
// version; pre-releases only when the constraint names one or
// SelectOptions.Prerelease is set.
//
// # Security
//
// Scan refuses files that someone other than the host's user or root could replace
// through permission bits or ownership. It does not inspect the directories above the
// scanned one, nor ACLs, and it is a snapshot: a pin checked at the start itself
// (platform.Config.Digest, used by registry.Config.Pins) is bound to the executed
// bytes instead.
//
// docs/discovery.md in the repository states every rule in full: the order of the
// rejection reasons, how links and owners are checked, pre-release selection, and what
// AllowGroupWritable lets a group's members do.
package discovery
