// Command adapterctl lists, inspects, calls and checks adapters: executables that speak
// the Adapter process protocol v1 over their stdin and stdout. It also runs the
// control-plane daemon that keeps adapters supervised, and asks it.
//
// It is the top of the module's layers and may import any library package; what only it
// uses is its own (cmd/adapterctl/internal/systemd, cmd/adapterctl/internal/contractgen).
//
//	adapterctl list    [--json] DIR...
//	adapterctl inspect [--json] [-v] [--log-level L] [--config JSON] ADAPTER
//	adapterctl call    [--json] [-v] [--log-level L] [--timeout D] [--config JSON] ADAPTER METHOD [PARAMS_JSON|-]
//	adapterctl check   [--json] [-v] [--log-level L] [--timeout D] [--config JSON] [--contract FILE] ADAPTER
//	adapterctl help    [COMMAND]
//	adapterctl contract schema [-o FILE] PACKAGE...
//	adapterctl contract gen -lang typescript|python|rust -o DIR PACKAGE...
//
//	adapterctl serve   [--socket SOCKET] [--json] [--env KEY=VALUE]... [--inherit-env]
//	                   [--adapter-stderr] [--log LEVEL] [--metrics HOST:PORT] [DIR...]
//	adapterctl wait         [--socket SOCKET] [--timeout D]
//	adapterctl ping         [--socket SOCKET] [--json]
//	adapterctl version      [--socket SOCKET] [--json]
//	adapterctl capabilities [--socket SOCKET] [--json]
//	adapterctl status       [--socket SOCKET] [--json]
//	adapterctl top          [--socket SOCKET] [--once] [--interval D] [--json]
//	adapterctl discover     [--socket SOCKET] [--timeout D] [--json]
//	adapterctl call    --socket SOCKET [--json] [--timeout D] ADAPTER METHOD [PARAMS_JSON|-]
//
// ADAPTER is the path of an executable, or NAME[@CONSTRAINT] (for example
// "thermometer@~> 1.0") looked up in the directories given with --dir (repeatable) or,
// when there is none, in the ADAPTERKIT_PATH environment variable (a list of
// directories separated by the OS path-list separator). Relative paths (ADAPTER, DIR,
// --dir) are taken from the working directory and the absolute path used is shown on
// stderr: the library launches by absolute path only (R61, A31), adapterctl resolves
// what a person types. See package discovery for the
// naming convention NAME_vVERSION.
//
// Every command that starts an adapter ends it verified: stdin is closed, the adapter
// may exit on its own within the disconnect grace, then its whole process tree is
// killed and proven gone; when that proof cannot be had, adapterctl says so and exits
// with status 4.
//
// With -v (or --log-level LEVEL) inspect, call and check show the adapter's standard
// error on stderr, attributed to it: the records of the logger package plugin gives
// adapters at their own level ("[INFO]  thermometer: reading: pid=4242 probe=inlet"),
// other lines at info; the adapter's logger gets LEVEL (default info) through
// $ADAPTERKIT_LOG_LEVEL. See docs/observability.md.
//
// # The daemon
//
// "adapterctl serve" runs the control-plane daemon (package controlplane): the
// adapters found in each DIR (default: $ADAPTERKIT_PATH) are kept supervised and
// clients of the same user are answered over the Unix domain socket SOCKET (default
// $XDG_RUNTIME_DIR/adapterkit.sock, or adapterkit.sock in a 0700 per-user directory
// of $TMPDIR). The client commands use the same default, refuse a socket whose
// listening process is neither this user's nor root's, and
// print what the daemon sends with terminal control characters escaped. It prints
// one line when the socket accepts connections ("serving N adapters from DIRS on
// SOCKET (pid P)") and stops on SIGTERM or SIGINT, closing every adapter verified; a
// last line says whether every process tree was proven gone (exit 0) or not (exit
// 4). It exits 3 when it cannot start (a daemon already answers on SOCKET, the socket
// cannot be created, or the OS is unsupported: Windows), 5 when a DIR cannot be
// scanned. With --json both lines are JSON objects ({"event":"ready",...} and
// {"event":"stopped","verified":...}).
//
// With --metrics HOST:PORT it serves Prometheus metrics at /metrics on a listener of
// its own. Under systemd it serves the sockets passed by socket activation (a Unix
// one as SOCKET, a TCP one as --listen) and reports readiness on $NOTIFY_SOCKET
// (READY=1, RELOADING=1 on SIGHUP, STOPPING=1); contrib/systemd has the unit files.
// See docs/operations.md.
//
// With --log LEVEL the daemon logs on stderr, its adapters' records among them under
// their names ("adapterctl.thermometer"). status shows each adapter's per-method calls,
// errors by code and p50/p99 latency, the memory and CPU of its process tree, its last
// exit and its last stderr lines; top shows them as a table refreshed every second.
//
// ping, version, capabilities, status, top and discover ask that daemon, printing aligned
// text or, with --json, the control-plane result (discover: one line per event as it
// arrives, JSON lines with --json, until the stream's --timeout). "call --socket" sends
// the call to the daemon instead of starting the adapter: ADAPTER is passed as given,
// and --dir, --config, --env, --inherit-env and --adapter-stderr are usage errors with
// it. Its output is that of a local call: the result on stdout, the error on stderr
// with the adapter protocol's code, the outcome (uncertain, never started) and the
// violation where the daemon reported them, and the control-plane code.
//
// # Remote daemons
//
//	adapterctl serve --listen HOST:PORT --tls-cert FILE --tls-key FILE --client-ca FILE
//	                 --allow NAME=ROLE... [--socket SOCKET] [--handshake-timeout D]
//	                 [--idle-timeout D] [DIR...]
//	adapterctl COMMAND --remote HOST:PORT --tls-ca FILE --tls-cert FILE --tls-key FILE ...
//	adapterctl certs --dir DIR [--host HOST]... [--client NAME]... [--valid D]
//
// "serve --listen" also serves on TCP, with mutual TLS 1.3 only: a client certificate
// chaining to --client-ca, named by an --allow (common name or spki:sha256/BASE64) with
// role read (Ping, Version, Capabilities, Discover, Status) or call (also Send); a
// method the role does not allow is permission_denied. SIGHUP re-reads the certificate
// files. Every client command reaches such a daemon with --remote and the --tls-*
// flags, or $ADAPTERKIT_REMOTE, $ADAPTERKIT_TLS_CA, $ADAPTERKIT_TLS_CERT and
// $ADAPTERKIT_TLS_KEY. "certs" makes a CA, a daemon certificate and client certificates
// to try it with. See docs/remote.md.
//
// # Exit status
//
//	0  success
//	1  the adapter answered with an error (call), or a check failed (check)
//	2  usage error (bad flags or arguments, malformed JSON)
//	3  the adapter or the daemon could not serve the command: the adapter could not
//	   be started, failed its handshake, violated the protocol or exited; the daemon
//	   could not be reached or started, was not trusted, closed the connection, did
//	   not answer, or refused the request (permission_denied, internal, unknown_method)
//	4  the adapter's process tree could not be verified gone (takes precedence)
//	5  the adapter was not found, or a directory could not be scanned
//	6  the daemon's connection ended with the request under way: its outcome is
//	   uncertain (the call may have run); repeat it only if that is harmless
//
// A control-plane error of the daemon maps to the same statuses: not_found 5;
// invalid_params 2 (the request was refused, e.g. a malformed ADAPTER reference) but 1
// when the adapter itself answered invalid; not_implemented 1 (the adapter does not
// advertise the method); transport_error 1 when the adapter answered with an error or
// the call's deadline passed, 3 when the adapter could not be started, broke the
// protocol or exited; 4 when its process tree was not verified gone; frame_too_large
// 2; permission_denied, unknown_method, internal and codes unknown to this
// adapterctl 3.
//
// serve and certs have their own exit statuses, in their help.
//
// Errors go to stderr, as text, or as one JSON object with --json. Run
// "adapterctl help COMMAND" for the details of each command, and "adapterctl help check"
// for the conformance checks an adapter author in any language can run.
package main
