import { closeSync, openSync } from "node:fs";
import { isatty } from "node:tty";

import { AdapterDefinitionError, ProtocolViolation } from "./errors.js";
import { Adapter, serve } from "./server.js";

let protectedFd: number | undefined;

/**
 * Moves stdout out of everyone's reach and returns the descriptor frames must be
 * written to. Node has no dup(2), so on Linux the pipe behind fd 1 is reopened through
 * /proc/self/fd/1 as a private descriptor (close-on-exec), fd 1 is closed and stderr is
 * reopened in its place (the null device if stderr is a socket): `console.log`,
 * `process.stdout`, native code and child processes writing to fd 1 all reach stderr
 * (R6). Where that is impossible (no /proc,
 * stdout a socket) only `process.stdout` and `console.log` are redirected to stderr, and
 * a warning says so. Acts once per process.
 */
export function protectStdout(warn: (message: string) => void = () => {}): number {
  if (protectedFd !== undefined) {
    return protectedFd;
  }
  let frames: number | undefined;
  for (const path of ["/proc/self/fd/1", "/dev/fd/1"]) {
    try {
      frames = openSync(path, "w");
      break;
    } catch {
      // try the next way
    }
  }
  let fdLevel = false;
  if (frames !== undefined) {
    closeSync(1);
    // The lowest free descriptor, 1, becomes stderr, or the null device where stderr
    // cannot be reopened (a socket): either way nothing written to fd 1 reaches the host.
    for (const path of ["/proc/self/fd/2", "/dev/null"]) {
      try {
        const fd = openSync(path, "a");
        if (fd === 1) {
          fdLevel = true;
          if (path === "/dev/null") {
            warn("stderr cannot be reopened: output written to fd 1 is discarded");
          }
          break;
        }
        closeSync(fd);
      } catch {
        // try the next way
      }
    }
  } else {
    frames = 1;
  }
  if (!fdLevel) {
    warn("stdout is protected from process.stdout and console.log only, not at the file-descriptor level");
  }
  // process.stdout is created lazily: make it, and console.log, write to stderr.
  Object.defineProperty(process, "stdout", { configurable: true, enumerable: true, get: () => process.stderr });
  console.log = console.error;
  console.info = console.error;
  protectedFd = frames;
  return frames;
}

function terminalMessage(prog: string): string {
  return (
    `${prog} is an adapter: a host starts it and speaks the Adapter process protocol v1 with it\n` +
    `over stdin and stdout (length-prefixed JSON frames), so it is not meant to be run by hand.\n` +
    `To try it, run it through a host, e.g.:\n` +
    `  adapterctl check ${prog}\n` +
    `  adapterctl call ${prog} METHOD '{...}'\n`
  );
}

/**
 * Serves `adapter` over stdin and stdout and exits the process: the whole of an
 * adapter's main program.
 *
 * Its first action protects stdout (protectStdout). Run in a terminal (stdin is a TTY)
 * it explains what an adapter is and exits with status 2. Otherwise it serves until the
 * host disconnects and exits with status 0 (R49), or with status 1 after logging the
 * cause to stderr: an invalid adapter definition (checked before anything is read), a
 * host protocol violation, or a failed output. It exits within 2 s of the end of stdin
 * whatever the handlers do.
 */
export function run(adapter: Adapter<any>): void {
  const log = adapter.logger;
  const out = protectStdout((m) => log.warn(m));
  if (isatty(0)) {
    process.stderr.write(terminalMessage(process.argv[1] ?? "this adapter"));
    process.exit(2);
  }
  serve(adapter, process.stdin, out).then(
    () => process.exit(0),
    (e: unknown) => {
      if (e instanceof AdapterDefinitionError) {
        log.error("invalid adapter", { error: e.message });
      } else if (e instanceof ProtocolViolation) {
        log.error("ending the connection: host protocol violation", { error: e.message });
      } else {
        log.error("serving failed", { error: e instanceof Error ? e.message : String(e) });
      }
      process.exit(1);
    },
  );
}
