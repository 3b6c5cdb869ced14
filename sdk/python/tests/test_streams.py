"""The recipe of docs/contracts.md "Streams" for a Python adapter: an upload method
(contract.NewUpload on the Go side) served by an async handler that reads the stream as
it arrives, and a download method (contract.NewDownload) served by one that writes it.
The SDK has no stream helper; an adapter copies these classes (they use only asyncio
and base64) and registers an instance as the method's handler:

    files = Upload(put)                   # async def put(params, reader) -> result
    service.add("example.files.put", files.chunk)
    back = Download(get, "example.files.get")  # async def get(params, writer) -> None
    service.add("example.files.get", back.read)

The host (registry.Upload) sends chunks {"stream", "seq", "offset", "data" (base64),
"eof"?, "params"? (chunk 0), "abort"?}, up to two in flight, so chunk K+1 may arrive
first: chunk() hands the data to the handler in order of seq, answers {} once the
handler's reader holds it, and the last chunk {"result": ...} once the handler returned.

The host (registry.Download) makes waiting reads {"stream", "max_bytes", "wait_ms",
"params"? (the first read), "close"?}: the first starts the handler, each returns
{"data": base64, "eof"} with what the handler wrote so far (nothing after wait_ms), and
the handler's error is the reply of the read after its last bytes; the handler's
write() waits while about two chunks wait for the host. The handler is cancelled
(asyncio.CancelledError) when the host closes the stream or cancels a read.
"""

import asyncio
import base64
import hashlib
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from adapterkit import MAX_FRAME, CallError  # noqa: E402


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
                self._buf, taken = item
                if not taken.done():
                    taken.set_result(True)  # chunk() may answer the chunk now
        out, self._buf = self._buf[:n], self._buf[n:]
        return out


class _Stream:
    def __init__(self):
        self.next = 0  # the seq whose turn it is
        self.turn = asyncio.Condition()
        # (bytes, a future the reader sets on taking them), or None after the last chunk
        self.data = asyncio.Queue(maxsize=1)
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
        try:
            return await self._chunk(name, st, p)
        except asyncio.CancelledError:  # the host cancelled the call: the stream is given up
            if self.streams.get(name) is st:
                self.streams.pop(name)
            if st.task:
                st.task.cancel()
            raise

    async def _chunk(self, name, st, p):
        async with st.turn:
            await st.turn.wait_for(lambda: st.next == p["seq"])
        if p["seq"] == 0:
            st.task = asyncio.ensure_future(self.handler(p.get("params") or {}, StreamReader(st.data)))
        data = base64.b64decode(p.get("data") or "")
        taken = not data  # the handler took the chunk's bytes (none to take: as good)
        if data:
            took = asyncio.get_running_loop().create_future()
            put = asyncio.ensure_future(st.data.put((data, took)))
            await asyncio.wait({took, st.task}, return_when=asyncio.FIRST_COMPLETED)
            taken = took.done()
            if not taken:  # the handler returned without reading on
                put.cancel()
        if p.get("eof") and not st.task.done():
            put = asyncio.ensure_future(st.data.put(None))
            await asyncio.wait({put, st.task}, return_when=asyncio.FIRST_COMPLETED)
            put.cancel()
        async with st.turn:
            st.next += 1
            st.turn.notify_all()
        if not p.get("eof"):
            if taken or not (st.task.cancelled() or st.task.exception() is not None):
                return {}
            self.streams.pop(name, None)
            return await st.task  # raises the handler's error: the first chunk it did not take
        self.streams.pop(name, None)
        return {"result": await st.task}


def chunk_bytes(method):
    """The most bytes one chunk carries through method: base64 of a frame less 1 KiB for
    the envelope, a multiple of 3 (as the Go host and SDK count)."""
    return (MAX_FRAME - 1024 - len(method)) // 4 * 3


class StreamWriter:
    """What a download's handler writes to."""

    def __init__(self, st):
        self._st = st

    async def write(self, data):
        """Adds data to what the host's reads return, waiting while about two chunks wait
        for the host."""
        st = self._st
        while data:
            room = st.limit - len(st.buf)
            if room > 0:
                st.buf += data[:room]
                data = data[room:]
                st.changed()
                continue
            await st.change.wait()


class _Download:
    def __init__(self, limit):
        self.limit = limit
        self.buf = bytearray()  # written, not yet read
        self.change = asyncio.Event()  # set when buf or task changed; replaced then
        self.task = None  # the handler

    def changed(self):
        self.change.set()
        self.change = asyncio.Event()


class Download:
    """The handler of one download method: read(params) per call."""

    def __init__(self, handler, method):
        self.handler = handler
        self.max = chunk_bytes(method)
        self.streams = {}

    async def read(self, p):
        name, max_bytes, wait_ms = p["stream"], p.get("max_bytes", 0), p.get("wait_ms", 0)
        if max_bytes <= 0 or wait_ms < 0:
            raise CallError("invalid", "max_bytes must be above 0 and wait_ms at least 0")
        st = self.streams.get(name)
        if p.get("close"):
            if st:
                self.streams.pop(name, None)
                st.task.cancel()
            return {"data": "", "eof": True}
        if st is None:
            st = self.streams[name] = _Download(2 * self.max)
            st.task = asyncio.ensure_future(self.handler(p.get("params") or {}, StreamWriter(st)))
            st.task.add_done_callback(lambda _: st.changed())
        deadline = asyncio.get_running_loop().time() + wait_ms / 1000
        try:
            while not st.buf and not st.task.done():
                left = deadline - asyncio.get_running_loop().time()
                if left <= 0:
                    return {"data": "", "eof": False}  # nothing yet: an empty chunk
                try:
                    await asyncio.wait_for(st.change.wait(), left)
                except asyncio.TimeoutError:
                    pass
        except asyncio.CancelledError:  # the host cancelled the read: the stream is given up
            if self.streams.get(name) is st:
                self.streams.pop(name)
            st.task.cancel()
            raise
        n = min(len(st.buf), max_bytes, self.max)
        data = base64.b64encode(bytes(st.buf[:n])).decode()
        del st.buf[:n]
        st.changed()
        if not st.task.done() or st.buf:
            return {"data": data, "eof": False}
        if st.task.cancelled() or st.task.exception() is not None:
            # The handler failed: its last bytes go first, its error is the reply to the
            # read after them.
            if n > 0:
                return {"data": data, "eof": False}
            self.streams.pop(name, None)
            return await st.task  # raises the handler's error
        self.streams.pop(name, None)
        return {"data": data, "eof": True}


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
        # Chunks of 64 bytes read 7 at a time: the handler took chunks 0 and 1, and
        # failed reading past byte 100: chunk 2 is the first whose bytes it did not take.
        self.assertEqual(errors, [(2, "failed")])
        self.assertEqual(up.streams, {})

    def test_a_chunk_that_arrives_late_gets_the_streams_answer(self):
        # The host has two chunks in flight and sends each from its own goroutine, so
        # chunk 1's call may come after chunk 2's, and after the handler returned. A
        # chunk is answered only on its turn (after every earlier chunk's call came), so
        # the answer never leaves a late earlier chunk a second, empty stream that waits
        # for a chunk 0 that will not come. wait_for turns such a hang into a failure.
        boom = CallError("failed", "boom")

        async def fails(params, reader):
            await reader.read(1)
            raise boom

        async def returns_early(params, reader):
            return 42

        def chunk(seq, data, **kw):
            return dict(stream="s", seq=seq, offset=seq, data=base64.b64encode(data).decode(), **kw)

        async def run(handler, aborts):
            up = Upload(handler)
            self.assertEqual(await up.chunk(chunk(0, b"a", params={})), {})
            await asyncio.wait({up.streams["s"].task})  # the handler returned
            later = asyncio.ensure_future(up.chunk(chunk(2, b"c", eof=handler is returns_early)))
            for _ in range(20):  # chunk 2 takes every step it can take without chunk 1
                await asyncio.sleep(0)
            earlier = asyncio.ensure_future(up.chunk(chunk(1, b"b")))
            got = await asyncio.wait_for(asyncio.gather(earlier, later, return_exceptions=True), 10)
            if aborts:  # as registry.Upload does after a failed chunk
                await up.chunk({"stream": "s", "seq": 1, "offset": 1, "data": "", "abort": "chunk 1 failed"})
            return got, up.streams

        (one, two), left = asyncio.run(run(fails, True))
        self.assertEqual([(e.code, e.message) for e in (one, two)], [("failed", "boom")] * 2)
        self.assertEqual(left, {})
        self.assertEqual(asyncio.run(run(returns_early, False)), ([{}, {"result": 42}], {}))

    def test_a_chunk_that_arrives_after_the_failure_is_given_up_with_its_call(self):
        # Chunk 0 is answered with the handler's error before chunk 1, in flight, comes:
        # chunk 1 finds no stream and waits for a chunk 0 that will not come, until the
        # host cancels its call (registry.Upload cancels the chunks after a failed one);
        # then nothing of the stream is left.
        async def fails(params, reader):
            raise CallError("failed", "boom")

        async def run():
            up = Upload(fails)
            with self.assertRaises(CallError):
                await up.chunk({"stream": "s", "seq": 0, "offset": 0, "data": "YQ==", "params": {}})
            late = asyncio.ensure_future(up.chunk({"stream": "s", "seq": 1, "offset": 1, "data": "Yg=="}))
            for _ in range(20):
                await asyncio.sleep(0)
            late.cancel()  # the host's cancel of the call
            got = await asyncio.gather(late, return_exceptions=True)
            await up.chunk({"stream": "s", "seq": 0, "offset": 0, "data": "", "abort": "chunk 0 failed"})
            return got, up.streams

        (got,), left = asyncio.run(run())
        self.assertIsInstance(got, (asyncio.CancelledError, CallError))
        self.assertEqual(left, {})


async def written(params, writer):
    """Writes params["bytes"] (hex), 1000 bytes at a time; fails after fail_after."""
    blob = bytes.fromhex(params["bytes"])
    for off in range(0, len(blob), 1000):
        if params.get("fail_after") and off >= params["fail_after"]:
            raise CallError("failed", "failing after %d bytes" % off)
        await writer.write(blob[off : off + 1000])


class DownloadRecipe(unittest.TestCase):
    def read_all(self, down, name, params, max_bytes=4096):
        """The reads registry.Download makes, to the end: the bytes, and the error."""

        async def run():
            out, first = b"", True
            while True:
                r = {"stream": name, "max_bytes": max_bytes, "wait_ms": 1000}
                if first:
                    r["params"], first = params, False
                try:
                    got = await down.read(r)
                except CallError as e:
                    return out, e
                data = base64.b64decode(got["data"])
                self.assertLessEqual(len(data), max_bytes)
                out += data
                if got["eof"]:
                    return out, None

        return asyncio.run(run())

    def test_reads_return_what_the_handler_wrote(self):
        blob = os.urandom(20000)  # beyond the writer's limit: its write waits for reads
        down = Download(written, "test.streams.get")
        down.max = 3000
        out, err = self.read_all(down, "d1", {"bytes": blob.hex()})
        self.assertEqual((out, err), (blob, None))
        self.assertEqual(down.streams, {})

    def test_handler_error_after_its_bytes(self):
        down = Download(written, "test.streams.get")
        out, err = self.read_all(down, "d2", {"bytes": bytes(5000).hex(), "fail_after": 3000})
        self.assertEqual(out, bytes(3000))
        self.assertEqual((err.code, err.message), ("failed", "failing after 3000 bytes"))
        self.assertEqual(down.streams, {})

    def test_nothing_within_wait_ms_and_close(self):
        async def hold(params, writer):
            await asyncio.Event().wait()

        async def run():
            down = Download(hold, "test.streams.get")
            first = await down.read({"stream": "d3", "max_bytes": 10, "wait_ms": 10, "params": {}})
            task = down.streams["d3"].task
            closed = await down.read({"stream": "d3", "max_bytes": 1, "wait_ms": 0, "close": True})
            with self.assertRaises(asyncio.CancelledError):
                await task
            return first, closed, down.streams

        self.assertEqual(asyncio.run(run()), ({"data": "", "eof": False}, {"data": "", "eof": True}, {}))


if __name__ == "__main__":
    unittest.main()
