#!/usr/bin/env python3
"""Builds a Python adapter into one executable file: a zipapp holding the adapterkit
package and the adapter's script as __main__, behind a "#!" line that names the
interpreter by its absolute path.

    python3 sdk/python/tools/build_adapter.py [--python INTERPRETER] SCRIPT OUTPUT

A host starts an adapter with an empty environment unless it passes one, so a
"#!/usr/bin/env python3" line would find only a system python3, if any. The "#!" line
is therefore the Python running this tool (sys.executable: a virtual environment's,
pyenv's or conda's python when that is what ran it), or INTERPRETER, an absolute path
such as /opt/python3.12/bin/python3 (or "/usr/bin/env python3" for a host that passes
a PATH). Name OUTPUT NAME_vX.Y.Z for discovery.
"""

import argparse
import os
import stat
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(os.path.dirname(HERE), "adapterkit")


def interpreter_line(interpreter: str) -> bytes:
    """Returns the "#!" line for interpreter, or raises ValueError saying why it cannot be one."""
    if not interpreter:
        raise ValueError("the Python running this tool does not know its own path (sys.executable is empty): name one with --python")
    if not os.path.isabs(interpreter):
        raise ValueError(f"--python {interpreter!r} is not an absolute path: a host starts its adapters without a PATH")
    if any(c in interpreter for c in "\n\r") or (interpreter == sys.executable and any(c.isspace() for c in interpreter)):
        raise ValueError(f"the interpreter path {interpreter!r} cannot be a #! line (it holds white space): name one with --python")
    line = b"#!" + os.fsencode(interpreter) + b"\n"
    if len(line) > 255:
        raise ValueError(f"the #! line would be {len(line)} bytes, beyond the kernel's limit: name a shorter interpreter path with --python")
    return line


def build(script: str, output: str, interpreter: str = "") -> None:
    """Writes the adapter SCRIPT, with the SDK, to OUTPUT as an executable zipapp run by
    interpreter (default: sys.executable)."""
    line = interpreter_line(interpreter or sys.executable)
    tmp = output + ".tmp"
    with open(tmp, "wb") as f:
        f.write(line)
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as z:
            for name in sorted(os.listdir(PACKAGE)):
                if name.endswith(".py"):
                    z.write(os.path.join(PACKAGE, name), "adapterkit/" + name)
            z.write(script, "__main__.py")
    mode = os.stat(tmp).st_mode
    os.chmod(tmp, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(tmp, output)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        prog="build_adapter.py",
        description="Build a Python adapter into one executable file (a zipapp).",
    )
    ap.add_argument(
        "--python",
        metavar="INTERPRETER",
        default="",
        help="the absolute path the #! line names (default: this Python, %s)" % (sys.executable or "unknown"),
    )
    ap.add_argument("script", help="the adapter's script")
    ap.add_argument("output", help="the executable to write, named NAME_vX.Y.Z")
    args = ap.parse_args(argv)
    try:
        build(args.script, args.output, args.python)
    except ValueError as e:
        ap.exit(2, f"build_adapter.py: {e}\n")


if __name__ == "__main__":
    main()
