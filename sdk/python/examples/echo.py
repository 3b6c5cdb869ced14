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
  example.echo.record, example.echo.blob, example.echo.exact
                      decode their params into a dataclass and return it, encoded
                      again: the typed path, for tests of exactness (every integer
                      size, floats, a number's literal, base64 bytes, nested and
                      optional objects, maps, lists)

With ADAPTERKIT_ECHO_STRAY_STDOUT=1 in its environment, example.echo.echo also prints to
stdout (print() and a raw write to fd 1): tests use it to show that stray output cannot
reach the protocol stream.
"""

import asyncio
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import adapterkit
from adapterkit import CallError, Float32, Int8, Int32, Int64, Number, RawJSON, Uint16, Uint32, Uint64

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


@dataclass
class Record:
    probe: str = ""
    seq: int = 0
    unit: str = ""
    pad: str = ""


@dataclass
class Blob:
    s: str = ""


@dataclass
class Inner:
    name: str = ""
    count: Uint64 = Uint64(0)
    tags: Optional[Dict[str, Int64]] = None


Bytes = bytes  # the field named bytes hides the type inside the class


@dataclass
class Exact:
    # Go's Exact embeds Inner: its fields are the object's own.
    name: str = ""
    count: Uint64 = Uint64(0)
    tags: Optional[Dict[str, Int64]] = None
    i64_max: int = 0
    i64_min: int = 0
    u64_max: Uint64 = Uint64(0)
    i32_min: Int32 = Int32(0)
    u32_max: Uint32 = Uint32(0)
    i8_min: Int8 = Int8(0)
    u16_max: Uint16 = Uint16(0)
    beyond: int = 0
    int: Int64 = Int64(0)
    tenth: float = 0.0
    max: float = 0.0
    tiny: float = 0.0
    third: float = 0.0
    f32: Float32 = Float32(0.0)
    number: Number = Number("0")
    escapes: str = ""
    seps: str = ""
    astral: str = ""
    bytes: Optional[Bytes] = None
    any: Any = None
    ptr: Optional[Inner] = None
    ptr_ptr: Optional[Int64] = None
    nil: Optional[Inner] = None
    map: Optional[Dict[str, Inner]] = None
    slice: Optional[List[Inner]] = None
    matrix: Optional[List[List[Uint64]]] = None
    empty: Optional[List[str]] = None


def same(cls):
    """A handler returning its params: the SDK decoded them into a cls and encodes the
    cls again (the typed path)."""

    async def handler(p: cls) -> cls:  # type: ignore[valid-type]
        return p

    return handler


svc.add("example.echo.record", same(Record))
svc.add("example.echo.blob", same(Blob))
svc.add("example.echo.exact", same(Exact))


if __name__ == "__main__":
    adapterkit.run(adapterkit.Adapter(services=[svc]))
