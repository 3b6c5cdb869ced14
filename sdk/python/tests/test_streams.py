"""The recipe of docs/contracts.md "Streams" for a Python adapter: an upload method
(contract.NewUpload on the Go side) served by an async handler that reads the stream as
it arrives. The SDK has no stream helper; an adapter copies this class (it uses only
asyncio and base64) and registers an instance as the method's handler:

    files = Upload(put)                   # async def put(params, reader) -> result
    service.add("example.files.put", files.chunk)

The host (registry.Upload) sends chunks {"stream", "seq", "offset", "data" (base64),
"eof"?, "params"? (chunk 0), "abort"?}, up to two in flight, so chunk K+1 may arrive
first: chunk() hands the data to the handler in order of seq, answers {} once the
handler's reader holds it, and the last chunk {"result": ...} once the handler returned.
"""

import asyncio
import base64
import hashlib
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from adapterkit import CallError  # noqa: E402


class StreamReader:
    """What the handler reads: the stream's bytes in order; b"" at the end."""

    def __init__(self, queue):
        self._queue = queue
        self._buf = b""
        self._eof = False

    async def read(self, n=65536):
        while not self._buf and not self._eof:
            item = await self._queue.get()
            if item is None:
                self._eof = True
            else:
                self._buf = item
        out, self._buf = self._buf[:n], self._buf[n:]
        return out


class _Stream:
    def __init__(self):
        self.next = 0  # the seq whose turn it is
        self.turn = asyncio.Condition()
        self.data = asyncio.Queue(maxsize=1)  # at most one chunk waits for the handler
        self.task = None  # the handler, from chunk 0


class Upload:
    """The handler of one upload method: chunk(params) per call."""

    def __init__(self, handler):
        self.handler = handler
        self.streams = {}

    async def chunk(self, p):
        name = p["stream"]
        st = self.streams.setdefault(name, _Stream())
        if p.get("abort"):  # the host gave the stream up
            self.streams.pop(name, None)
            if st.task:
                st.task.cancel()
            return {}
        async with st.turn:
            await st.turn.wait_for(lambda: st.next == p["seq"])
        if p["seq"] == 0:
            st.task = asyncio.ensure_future(self.handler(p.get("params") or {}, StreamReader(st.data)))
        data = base64.b64decode(p.get("data") or "")
        items = ([data] if data else []) + ([None] if p.get("eof") else [])
        for item in items:
            put = asyncio.ensure_future(st.data.put(item))
            await asyncio.wait({put, st.task}, return_when=asyncio.FIRST_COMPLETED)
            if not put.done():  # the handler returned without reading on
                put.cancel()
                break
        async with st.turn:
            st.next += 1
            st.turn.notify_all()
        if st.task.done() and (st.task.cancelled() or st.task.exception() is not None):
            self.streams.pop(name, None)
            return await st.task  # raises the handler's error: this chunk's reply
        if not p.get("eof"):
            return {}
        self.streams.pop(name, None)
        return {"result": await st.task}


def chunks(name, blob, size, params):
    """The calls registry.Upload makes for blob, chunk by chunk."""
    out, off, seq = [], 0, 0
    while True:
        part = blob[off : off + size]
        c = {"stream": name, "seq": seq, "offset": off, "data": base64.b64encode(part).decode()}
        if seq == 0:
            c["params"] = params
        if off + size >= len(blob):
            c["eof"] = True
            out.append(c)
            return out
        out.append(c)
        off, seq = off + size, seq + 1


async def digest(params, reader):
    h, n = hashlib.sha256(), 0
    while True:
        b = await reader.read(7)
        if not b:
            return {"bytes": n, "sha256": h.hexdigest(), "name": params["name"]}
        if params.get("fail_after") and n + len(b) > params["fail_after"]:
            raise CallError("failed", "failing after %d bytes" % n)
        h.update(b)
        n += len(b)


class UploadRecipe(unittest.TestCase):
    def test_chunks_out_of_order_are_read_in_order(self):
        blob = os.urandom(1000)
        up = Upload(digest)

        async def run():
            cs = chunks("s1", blob, 64, {"name": "f"})
            # Two in flight, the later one first, as a host's window lets them arrive.
            calls = []
            for i in range(0, len(cs), 2):
                pair = cs[i : i + 2][::-1]
                calls += await asyncio.gather(*(up.chunk(c) for c in pair))
            return calls

        replies = asyncio.run(run())
        last = [r for r in replies if r][-1]
        self.assertEqual(last["result"], {"bytes": 1000, "sha256": hashlib.sha256(blob).hexdigest(), "name": "f"})
        self.assertEqual(up.streams, {})

    def test_handler_error_is_a_later_chunks_reply(self):
        up = Upload(digest)

        async def run():
            errors = []
            for c in chunks("s2", bytes(640), 64, {"name": "f", "fail_after": 100}):
                try:
                    await up.chunk(c)
                except CallError as e:
                    errors.append((c["seq"], e.code))
                    break
            return errors

        errors = asyncio.run(run())
        self.assertEqual(len(errors), 1)
        self.assertEqual(errors[0][1], "failed")
        self.assertGreaterEqual(errors[0][0], 1)
        self.assertEqual(up.streams, {})


if __name__ == "__main__":
    unittest.main()
