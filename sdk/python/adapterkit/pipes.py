"""The frames' descriptors: reading the host's frames and writing the replies, without
ever blocking the event loop."""

from __future__ import annotations

import asyncio
import os
import queue
import select
import threading
from typing import Any, Callable, List, Optional, Union

from .errors import ProtocolViolation
from .wire import MAX_FRAME, looks_like_text


#: The most one write(2) to a pipe puts in atomically (POSIX; absent on Windows, where the
#: loop never writes itself: select.poll is absent too).
_PIPE_BUF = getattr(select, "PIPE_BUF", 512)


class Writer:
    """The only writer of the frames' descriptor, so the event loop never blocks on it.

    The replies completed in one turn of the loop go out together: at the next turn, or
    in the same turn when :meth:`flush_soon` was called before they were (the requests a
    read started answer in their tasks' first steps, then that flush runs), or at
    :meth:`release` for those given while a read's requests are dispatched. When nothing
    is being written and they fit in one atomic pipe write (``PIPE_BUF``) that poll(2)
    says fits now, the loop writes them itself; otherwise they go to a thread that writes
    whatever is queued with as few write calls as possible.
    """

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop, on_error: Callable[[OSError], None]) -> None:
        self._fd = fd
        self._loop = loop
        self._q: "queue.SimpleQueue[Optional[bytes]]" = queue.SimpleQueue()
        self._on_error = on_error
        self._batch: List[bytes] = []
        self._scheduled = 0  # flushes scheduled with call_soon and not yet run
        self._held = False
        self._queued = 0  # items given to the thread and not yet written, under _lock
        self._lock = threading.Lock()
        self._failed = False
        self._poll: Optional[select.poll] = None
        if hasattr(select, "poll"):
            self._poll = select.poll()
            self._poll.register(fd, select.POLLOUT)
        self._thread = threading.Thread(target=self._loop_thread, name="adapterkit-writer", daemon=True)
        self._thread.start()

    def put(self, frame: bytes) -> None:
        """Queues a frame for the next scheduled flush, or for :meth:`release`; called on
        the event loop only."""
        self._batch.append(frame)
        if not self._scheduled and not self._held:
            self.flush_soon()

    def hold(self) -> None:
        """Keeps the frames put from now on until :meth:`release`, which writes them."""
        self._held = True

    def release(self) -> None:
        """Ends :meth:`hold` and flushes what was put meanwhile."""
        self._held = False
        self._flush()

    def flush_soon(self) -> None:
        """Schedules a flush behind the callbacks already scheduled: after the first steps
        of the tasks just created, whose replies then leave in this turn of the loop
        rather than the next. Called on the event loop only."""
        self._scheduled += 1
        self._loop.call_soon(self._scheduled_flush)

    def _scheduled_flush(self) -> None:
        self._scheduled -= 1
        self._flush()

    def _flush(self) -> None:
        if not self._batch:
            return
        batch, self._batch = self._batch, []
        if self._failed:
            return
        data = batch[0] if len(batch) == 1 else b"".join(batch)
        n = 0
        # Only the loop adds to _queued: once the thread has brought it down to 0 it stays
        # 0 until the loop queues again, so reading it here needs no lock.
        if self._poll is not None and self._queued == 0 and len(data) <= _PIPE_BUF:
            try:
                if self._poll.poll(0):
                    n = os.write(self._fd, data)
            except OSError as e:
                self._failed = True
                self._on_error(e)
                return
        if n < len(data):
            with self._lock:
                self._queued += 1
                self._q.put(data[n:] if n else data)

    def flush(self) -> None:
        """Hands on the replies of this turn of the loop now; called on the event loop."""
        self._flush()

    def close(self, timeout: float) -> bool:
        """Writes what is queued, then stops; returns whether that finished in time.
        Call :meth:`flush` on the event loop first."""
        self._q.put(None)
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _loop_thread(self) -> None:
        q = self._q
        while True:
            item = q.get()
            parts: List[bytes] = []
            stop = item is None
            if item is not None:
                parts.append(item)
            while not stop:
                try:
                    more = q.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                else:
                    parts.append(more)
            if parts:
                data = memoryview(parts[0] if len(parts) == 1 else b"".join(parts))
                try:
                    while data:
                        data = data[os.write(self._fd, data) :]
                except OSError as e:
                    self._failed = True
                    self._on_error(e)
                    return
                finally:
                    with self._lock:
                        self._queued -= len(parts)
            if stop:
                return


class Frames:
    """Splits the host's byte stream into frame payloads (R1, R4, R5)."""

    def __init__(self) -> None:
        self.buf = bytearray()
        #: How many bytes the next read should ask for: the rest of the frame begun.
        self.need = 4

    def size(self) -> int:
        if not self.buf:  # between frames, as most reads begin
            return 65536
        return max(65536, min(self.need - len(self.buf), 1 << 22))

    def take(self, chunk: bytes) -> List[bytes]:
        buf = self.buf
        # The frames are cut from the chunk itself when nothing was left over before it,
        # as when the host's writes arrive whole: one copy of each payload, not three.
        data: Union[bytes, bytearray] = chunk
        if buf:
            buf += chunk
            data = buf
        frames: List[bytes] = []
        pos, size = 0, len(data)
        while size - pos >= 4:
            n = int.from_bytes(data[pos : pos + 4], "big")
            if n == 0 or n > MAX_FRAME:  # R4, R5: the body is never waited for
                hint = looks_like_text(bytes(data[pos : pos + 4]))
                what = "a zero-length frame" if n == 0 else "a frame of %d bytes exceeds the limit" % n
                raise ProtocolViolation(what + ("; " + hint if hint else ""))
            if size - pos - 4 < n:
                break
            payload = data[pos + 4 : pos + 4 + n]
            frames.append(payload if data is chunk else bytes(payload))
            pos += 4 + n
        if data is chunk:
            buf += chunk[pos:]
        elif pos:
            del buf[:pos]
        self.need = 4 + int.from_bytes(buf[:4], "big") if len(buf) >= 4 else 4
        return frames


def read_on_loop(fd: int, loop: asyncio.AbstractEventLoop, conn: "Any") -> bool:
    """Reads frames on the event loop, whenever ``fd`` is readable: no thread hand-off
    between a request's arrival and its dispatch. Returns False when the loop cannot
    watch ``fd`` (a regular file): then a :class:`Reader` thread must read."""
    frames = Frames()

    def readable() -> None:
        try:
            chunk = os.read(fd, frames.size())
            if not chunk:
                loop.remove_reader(fd)
                conn.end(ProtocolViolation("the input ended inside a frame") if frames.buf else None)
                return
            got = frames.take(chunk)
        except ProtocolViolation as e:
            loop.remove_reader(fd)
            conn.end(e)
            return
        except OSError as e:
            loop.remove_reader(fd)
            conn.end(ProtocolViolation("reading from the host: %s" % e))
            return
        if got:
            conn.feed(got)

    try:
        loop.add_reader(fd, readable)
    except (OSError, ValueError, NotImplementedError):  # a file; Windows' proactor loop
        return False
    conn.done.add_done_callback(lambda _: loop.remove_reader(fd))
    return True


class Reader:
    """A thread reading frames from the host and handing them to the event loop in
    batches, for an input the event loop cannot watch."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop, conn: "Any") -> None:
        self._fd, self._loop, self._conn = fd, loop, conn
        self._thread = threading.Thread(target=self._run, name="adapterkit-reader", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._read()
        except ProtocolViolation as e:
            self._deliver(self._conn.end, e)
        except OSError as e:
            self._deliver(self._conn.end, ProtocolViolation("reading from the host: %s" % e))
        else:
            self._deliver(self._conn.end, None)

    def _deliver(self, fn: Callable[..., None], arg: Any) -> None:
        try:
            self._loop.call_soon_threadsafe(fn, arg)
        except RuntimeError:
            pass  # the loop is closed: the connection is over

    def _read(self) -> None:
        fd, frames = self._fd, Frames()
        while True:
            chunk = os.read(fd, frames.size())
            if not chunk:
                if frames.buf:
                    raise ProtocolViolation("the input ended inside a frame")
                return
            got = frames.take(chunk)
            if got:
                self._deliver(self._conn.feed, got)
