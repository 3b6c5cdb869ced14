#!/usr/bin/env python3
"""The Python runtime's floor for `make bench-sdk`: reads exactly 64 bytes from stdin and
writes them back to stdout, again and again, with no framing and no JSON, until stdin
ends. A round trip through it is what bouncing a small message over a child's pipes
costs in Python itself; the SDK's echo adapter is measured against it."""

import os
import sys

SIZE = 64


def main() -> int:
    while True:
        buf = b""
        while len(buf) < SIZE:
            chunk = os.read(0, SIZE - len(buf))
            if not chunk:
                if buf:
                    sys.stderr.write("pingpong: stdin ended inside a message\n")
                    return 1
                return 0
            buf += chunk
        os.write(1, buf)


if __name__ == "__main__":
    sys.exit(main())
