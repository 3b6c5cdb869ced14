#!/usr/bin/env python3
"""The CPU an echo adapter spends per request, a measure that moves less with the load of
a shared machine than calls/s do (BENCH.md, "SDK echo adapters against the Go SDK").

    python3 sdk/tools/cpu_per_request.py ADAPTER [ROUNDS]

Starts ADAPTER (e.g. build/adapters/rsecho_v1.0.0, after `make adapters`), initializes
it, then ROUNDS times (default 3000) writes 32 example.echo.echo requests at once and
reads the 32 replies; then closes its stdin and divides the child's resource usage (user
and system CPU, start-up included) by the requests.
"""

import os
import struct
import subprocess
import sys
import time

PARAMS = '{"probe":"inlet","n":12345,"ok":true}'


def frame(payload: str) -> bytes:
    b = payload.encode()
    return struct.pack(">I", len(b)) + b


def main() -> int:
    if len(sys.argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    path = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) == 3 else 3000
    p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={"PATH": os.environ.get("PATH", "")})

    def recv() -> bytes:
        (n,) = struct.unpack(">I", p.stdout.read(4))
        return p.stdout.read(n)

    init = '{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{}}}'
    p.stdin.write(frame(init))
    p.stdin.flush()
    if b'"result"' not in recv():
        sys.stderr.write("%s refused initialize\n" % path)
        return 1
    next_id = 2
    start = time.monotonic()
    for _ in range(rounds):
        batch = [
            frame('{"type":"request","v":1,"id":%d,"method":"example.echo.echo","params":%s}' % (next_id + k, PARAMS))
            for k in range(32)
        ]
        next_id += 32
        p.stdin.write(b"".join(batch))
        p.stdin.flush()
        for _ in range(32):
            reply = recv()
            if b'"result"' not in reply:
                sys.stderr.write("%s answered %r\n" % (path, reply))
                return 1
    wall = time.monotonic() - start
    p.stdin.close()
    _, _, ru = os.wait4(p.pid, 0)
    n = max(rounds * 32, 1)
    print(
        "%s: %.1f µs CPU per request (user %.1f, system %.1f), %.0f calls/s"
        % (os.path.basename(path), (ru.ru_utime + ru.ru_stime) / n * 1e6, ru.ru_utime / n * 1e6, ru.ru_stime / n * 1e6, n / wall)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
