#!/usr/bin/env python3
"""pyecho: the echo test adapter of adapterkit written with the Python SDK.

Service example.echo version 1, exactly as the Go examples/echo:

  example.echo.echo   returns its params unchanged (as raw JSON, without decoding)
  example.echo.sleep  {"ms": 0..30000} -> {"ms": N} after N ms; a cancel ends the wait
                      early with aborted "Sleep canceled"
  example.echo.fail   {"code": string, "message": string} -> that error (the SDK sends
                      an unknown code as failed and caps the message at 4096 bytes)
  example.echo.big    {"bytes": N} -> a JSON string of N 'x' characters, N at most the
                      frame limit less 1 KiB

With ADAPTERKIT_ECHO_STRAY_STDOUT=1 in its environment, example.echo.echo also prints to
stdout (print() and a raw write to fd 1): tests use it to show that stray output cannot
reach the protocol stream.
"""

import asyncio
import os
from dataclasses import dataclass

import adapterkit
from adapterkit import CallError, RawJSON

MAX_SLEEP_MS = 30000
MAX_BIG = adapterkit.MAX_FRAME - 1024
STRAY = os.environ.get("ADAPTERKIT_ECHO_STRAY_STDOUT") == "1"

svc = adapterkit.Service("example.echo", 1)


@svc.method("example.echo.echo")
async def echo(params: RawJSON) -> RawJSON:
    if STRAY:
        print("a stray print() on stdout")
        os.write(1, b"a stray write to fd 1\n")
    return params


@dataclass
class Sleep:
    ms: int = 0


@svc.method("example.echo.sleep")
async def sleep(p: Sleep) -> Sleep:
    if not 0 <= p.ms <= MAX_SLEEP_MS:
        raise CallError("invalid", "ms must be from 0 to %d" % MAX_SLEEP_MS)
    try:
        await asyncio.sleep(p.ms / 1000)
    except asyncio.CancelledError:
        raise CallError("aborted", "Sleep canceled") from None
    return p


@dataclass
class Fail:
    code: str = ""
    message: str = ""


@svc.method("example.echo.fail")
async def fail(p: Fail) -> dict:
    raise CallError(p.code, p.message)


@dataclass
class Big:
    bytes: int = 0


@svc.method("example.echo.big")
async def big(p: Big) -> RawJSON:
    if not 0 <= p.bytes <= MAX_BIG:
        raise CallError("invalid", "bytes must be from 0 to %d" % MAX_BIG)
    return RawJSON('"' + "x" * p.bytes + '"')


if __name__ == "__main__":
    adapterkit.run(adapterkit.Adapter(services=[svc]))
