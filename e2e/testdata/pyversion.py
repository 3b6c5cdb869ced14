#!/usr/bin/env python3
"""pyversion: the live-upgrade test adapter written with the Python SDK.

Installed as pyversion_vX.Y.Z, it knows its version from the name it was started by.
Service example.echo version 1:

  example.echo.echo     returns its params unchanged
  example.echo.sleep    {"ms": N} -> {"ms": N} after N ms
  example.echo.version  {} -> {"version": X.Y.Z, "pid": the process id as the host sees it}
"""

import asyncio
import os
import sys
from dataclasses import dataclass

import adapterkit
from adapterkit import RawJSON

VERSION = os.path.basename(sys.argv[0]).partition("_v")[2]

svc = adapterkit.Service("example.echo", 1)


@svc.method("example.echo.echo")
async def echo(params: RawJSON) -> RawJSON:
    return params


@dataclass
class Sleep:
    ms: int = 0


@svc.method("example.echo.sleep")
async def sleep(p: Sleep) -> Sleep:
    await asyncio.sleep(p.ms / 1000)
    return p


def host_pid() -> int:
    # In a PID namespace getpid says 1; /proc/self names the host's id.
    try:
        return int(os.readlink("/proc/self"))
    except (OSError, ValueError):
        return os.getpid()


@svc.method("example.echo.version")
async def version(params: dict) -> dict:
    return {"version": VERSION, "pid": host_pid()}


if __name__ == "__main__":
    adapterkit.run(adapterkit.Adapter(services=[svc]))
