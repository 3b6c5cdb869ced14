"""run(): the whole of an adapter's main program."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import NoReturn, Tuple

from .errors import AdapterDefinitionError, ProtocolViolation
from .server import Adapter, serve

__all__ = ["run", "protect_stdout"]

_protected = None


def protect_stdout() -> Tuple[int, int]:
    """Moves stdout out of everyone's reach and returns ``(frames_fd, stdin_fd)``.

    The original descriptor 1 is duplicated to a private, non-inheritable descriptor used
    only for frames; then stderr is duplicated onto descriptor 1, so anything written to
    fd 1 (``print``, ``sys.stdout``, a C library, a child process) lands on stderr and
    cannot corrupt the frames (R6). ``sys.stdout`` becomes ``sys.stderr``. Acts once per
    process; later calls return the same descriptors.
    """
    global _protected
    if _protected is None:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
        out = os.dup(1)  # non-inheritable (PEP 446)
        os.dup2(2, 1)
        sys.stdout = sys.stderr
        _protected = (out, 0)
    return _protected


def _terminal_message(prog: str) -> str:
    return (
        "%s is an adapter: a host starts it and speaks the Adapter process protocol v1 with it\n"
        "over stdin and stdout (length-prefixed JSON frames), so it is not meant to be run by hand.\n"
        "To try it, run it through a host, e.g.:\n"
        "  adapterctl check %s\n"
        "  adapterctl call %s METHOD '{...}'\n" % (prog, prog, prog)
    )


def run(adapter: Adapter) -> NoReturn:
    """Serves ``adapter`` over stdin and stdout and exits the process.

    Its first action protects stdout (:func:`protect_stdout`). Run in a terminal (stdin is
    a TTY) it explains what an adapter is and exits with status 2 instead. Otherwise it
    serves until the host disconnects and exits with status 0 (R49), or with status 1
    after logging the cause to stderr: an invalid adapter definition (checked before
    anything is read), a host protocol violation, or a failed output. Plain handlers
    still running in threads at the end are abandoned: the process exits within 2 s of
    the end of stdin.
    """
    out_fd, in_fd = protect_stdout()
    log = adapter.logger
    if os.isatty(in_fd):
        sys.stderr.write(_terminal_message(sys.argv[0] or "this adapter"))
        sys.stderr.flush()
        os._exit(2)
    status = 0
    try:
        asyncio.run(serve(adapter, in_fd, out_fd))
    except AdapterDefinitionError as e:
        log.error("invalid adapter", error=str(e))
        status = 1
    except ProtocolViolation as e:
        log.error("ending the connection: host protocol violation", error=str(e))
        status = 1
    except KeyboardInterrupt:
        status = 130
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(status)  # threads of handlers that never returned are abandoned
