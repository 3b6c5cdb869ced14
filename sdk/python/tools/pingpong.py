#!/usr/bin/env python3
"""The Python runtime's floor for `make bench-sdk`: reads whatever has arrived on stdin
(64-byte messages) and writes it back to stdout in one write, again and again, with no
framing and no JSON, until stdin ends: one message per read and write with one caller,
as many as arrived together with many. A round trip through it is what bouncing a small
message over a child's pipes costs in Python itself; the SDK's echo adapter is measured
against it."""

import os
import sys

SIZE = 64


def main() -> int:
    total = 0
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            if total % SIZE:
                sys.stderr.write("pingpong: stdin ended inside a message\n")
                return 1
            return 0
        total += len(chunk)
        view = memoryview(chunk)
        while view:
            view = view[os.write(1, view) :]


if __name__ == "__main__":
    sys.exit(main())
