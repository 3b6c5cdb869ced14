"""The adapter of the stream recipe (test_streams.py), service test.streams version 1,
the same in every SDK and in the Go end-to-end test of streams (e2e/sdk_streams_test.go):

- test.streams.put (an upload) reads the stream and keeps it under its name; it returns
  {"bytes", "sha256"}. fail_after N fails (code failed) once N bytes were read; stall
  stops reading after the first read until the stream is given up.
- test.streams.get (a download) writes the stream kept under name; unknown, it fails with
  invalid. fail_after N fails (code failed) after writing N bytes; hold writes nothing
  until the stream is given up.
- test.streams.stats returns {"uploads", "downloads"} (the streams under way) and
  "aborted" (the handlers that saw their stream given up), once "aborted" is at least its
  param wait_aborted (waiting at most 10 s).
"""

import asyncio
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import adapterkit  # noqa: E402
from adapterkit import CallError  # noqa: E402
from test_streams import Download, Upload  # noqa: E402

blobs = {}
aborted = 0
aborted_changed = None  # an asyncio.Event, made on the loop's first use


async def given_up():
    """Waits until the handler is cancelled, and counts it."""
    global aborted
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        aborted += 1
        if aborted_changed is not None:
            aborted_changed.set()
        raise


async def put(params, reader):
    h, parts, n = hashlib.sha256(), [], 0
    while True:
        b = await reader.read(64 << 10)
        h.update(b)
        parts.append(b)
        n += len(b)
        if params.get("fail_after") and n >= params["fail_after"]:
            raise CallError("failed", "failing after %d bytes as asked" % n)
        if params.get("stall"):
            await given_up()
        if not b:
            blobs[params["name"]] = b"".join(parts)
            return {"bytes": n, "sha256": h.hexdigest()}


async def get(params, writer):
    if params.get("hold"):
        await given_up()
    blob = blobs.get(params.get("name", ""))
    if blob is None:
        raise CallError("invalid", 'no blob "%s"' % params.get("name", ""))
    end = min(len(blob), params["fail_after"]) if params.get("fail_after") else len(blob)
    for off in range(0, end, 256 << 10):
        await writer.write(blob[off : min(end, off + (256 << 10))])
    if end < len(blob):
        raise CallError("failed", "failing after %d bytes as asked" % end)


uploads = Upload(put)
downloads = Download(get, "test.streams.get")


async def stats(params):
    global aborted_changed
    loop = asyncio.get_running_loop()
    until = loop.time() + 10
    while aborted < params.get("wait_aborted", 0) and loop.time() < until:
        aborted_changed = asyncio.Event()
        try:
            await asyncio.wait_for(aborted_changed.wait(), until - loop.time())
        except asyncio.TimeoutError:
            pass
    return {"uploads": len(uploads.streams), "downloads": len(downloads.streams), "aborted": aborted}


svc = adapterkit.Service("test.streams", 1)
svc.add("test.streams.put", uploads.chunk)
svc.add("test.streams.get", downloads.read)
svc.add("test.streams.stats", stats)

if __name__ == "__main__":
    adapterkit.run(adapterkit.Adapter(services=[svc]))
