// Package launch is the launcher stage of a sandboxed adapter start (Linux), the part
// that runs in the re-executed host binary; package platform is the part in the host.
//
// It is platform's own (platform/internal, in platform's layer): platform is its only
// importer.
//
// This package's init recognises the launcher's private argv ("adapterkit-sandbox-launcher
// launch-v1") and then never returns: on the main thread (package initialisation runs
// there, locked) it drops every capability, sets no_new_privs, enforces the Landlock
// ruleset passed as descriptor 5, marks every descriptor past the adapter's
// close-on-exec, installs the seccomp filter of the specification (descriptor 4),
// reports readiness on the status pipe (descriptor 6) and executes the adapter, or
// reports the step that failed and exits with status 127. It is its own package, with
// few dependencies, so that Go runs it early among the host's package initialisers:
// only the standard library packages it depends on, and packages that do not depend on
// it and whose initialisation Go orders first, have run when it takes over.
package launch
