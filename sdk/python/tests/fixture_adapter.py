"""A test adapter exercising what the echo example does not: plain (threaded) handlers,
configuration, on_initialize, exceptions, stray output and long messages."""

import os
import sys
import time
from dataclasses import dataclass, field
from typing import List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import adapterkit  # noqa: E402
from adapterkit import CallError, RequestContext  # noqa: E402


@dataclass
class Config:
    greeting: str = "hello"
    refuse: bool = False


adapter = adapterkit.Adapter(services=[], configuration=Config)
svc = adapterkit.Service("test.fixture", 1)


def on_initialize(config: Config) -> None:
    if config.refuse:
        raise CallError("denied", "refused by configuration")


adapter.on_initialize = on_initialize


@dataclass
class Greet:
    name: str
    times: int = 1
    tags: Optional[List[str]] = field(default=None)


@svc.method("test.fixture.greet")
def greet(p: Greet) -> dict:
    return {"text": " ".join([adapter.config.greeting + ", " + p.name] * p.times), "tags": p.tags}


@svc.method("test.fixture.block")
def block(p: dict, ctx: RequestContext) -> dict:
    """A plain function: waits for cancellation in its thread."""
    if ctx.wait(30):
        raise CallError("aborted", "Block " + str(ctx.reason))
    return {}


@svc.method("test.fixture.stubborn")
def stubborn(p: dict, ctx: RequestContext) -> dict:
    """Ignores cancellation for a while: keeps its slot until it returns (R38)."""
    time.sleep(p.get("seconds", 0.5))
    return {"cancelled": ctx.cancelled}


@svc.method("test.fixture.crash")
async def crash(p: dict) -> dict:
    raise RuntimeError("boom")


@svc.method("test.fixture.nan")
async def nan(p: dict) -> float:
    return float("nan")


@svc.method("test.fixture.print")
def stray(p: dict) -> dict:
    print("stray print")
    os.write(1, b"stray fd write\n")
    os.system("echo stray child output")
    return {"printed": True}


@svc.method("test.fixture.log")
async def log(p: dict) -> dict:
    adapter.logger.info("logged", n=1)
    return {}


adapter.services = [svc]

if __name__ == "__main__":
    adapterkit.run(adapter)
