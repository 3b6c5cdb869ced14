// Command adapterctl lists, inspects, calls and checks adapters: executables that speak
// the Adapter process protocol v1 over their stdin and stdout.
//
//	adapterctl list    [--json] DIR...
//	adapterctl inspect [--json] [--config JSON] ADAPTER
//	adapterctl call    [--json] [--timeout D] [--config JSON] ADAPTER METHOD [PARAMS_JSON|-]
//	adapterctl check   [--json] [--timeout D] [--config JSON] ADAPTER
//	adapterctl help    [COMMAND]
//
// ADAPTER is an absolute path to an executable, or NAME[@CONSTRAINT] (for example
// "thermometer@~> 1.0") looked up in the directories given with --dir (repeatable) or,
// when there is none, in the ADAPTERKIT_PATH environment variable (a list of absolute
// directories separated by the OS path-list separator). See package discovery for the
// naming convention NAME_vVERSION.
//
// Every command that starts an adapter ends it verified: stdin is closed, the adapter
// may exit on its own within the disconnect grace, then its whole process tree is
// killed and proven gone; when that proof cannot be had, adapterctl says so and exits
// with status 4.
//
// # Exit status
//
//	0  success
//	1  the adapter answered with an error (call), or a check failed (check)
//	2  usage error (bad flags or arguments, malformed JSON, relative paths)
//	3  the connection broke: the adapter could not be started, the handshake failed,
//	   the adapter violated the protocol or its process exited
//	4  the adapter's process tree could not be verified gone (takes precedence)
//	5  the adapter was not found, or a directory could not be scanned
//
// Errors go to stderr, as text, or as one JSON object with --json. Run
// "adapterctl help COMMAND" for the details of each command, and "adapterctl help check"
// for the conformance checks an adapter author in any language can run.
package main
