"""The engine: one connection served over a pair of file descriptors."""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import inspect
import json
import sys
import threading
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

from .catalog import Method, Service, validate_catalog
from .errors import AdapterDefinitionError, CallError, ProtocolViolation
from .log import Logger
from .params import ParamsError, decode_value
from .pipes import Reader, Writer, read_on_loop
from .wire import (
    INITIALIZE,
    MAX_FRAME,
    MAX_ID,
    MAX_IN_FLIGHT,
    PROTOCOL_VERSION,
    RawJSON,
    compact_request,
    encode_value,
    error_frame,
    is_id,
    parse_object,
    result_frame,
)

__all__ = ["Adapter", "RequestContext", "serve"]

#: How long handlers get to return after the connection ended; then the replies are
#: flushed for at most FLUSH_WAIT. Both together stay well inside the 2 s of R49.
HANDLER_WAIT = 1.0
FLUSH_WAIT = 0.5

REQUEST_FIELDS = frozenset(["type", "v", "id", "method", "params"])
CANCEL_FIELDS = frozenset(["type", "v", "id"])

#: Why a request's context was cancelled.
CANCELED_BY_HOST = "canceled by the host"
DISCONNECTED = "host disconnected"


#: Guards the making and setting of every RequestContext's event.
_EVENTS = threading.Lock()


class RequestContext:
    """What a handler knows about its request, and its cancellation signal.

    An ``async def`` handler is cancelled as an asyncio task (``CancelledError`` at its
    next ``await``); a plain function, running in a thread, polls :attr:`cancelled` or
    blocks in :meth:`wait`. Either way, return promptly once cancelled: the request keeps
    its concurrency slot until the handler returns (R38).
    """

    def __init__(self, id: int, method: str, logger: Logger) -> None:
        #: The request id.
        self.id = id
        #: The method's full name.
        self.method = method
        #: The adapter's logger.
        self.logger = logger
        #: Why the request was cancelled (``"canceled by the host"`` or
        #: ``"host disconnected"``), or None.
        self.reason: Optional[str] = None
        # Made by the first wait() or cancellation, under _EVENTS: most requests have
        # neither, and a threading.Event per request was a measurable part of a call.
        self._event: Optional[threading.Event] = None

    @property
    def cancelled(self) -> bool:
        """Whether the host cancelled the request or disconnected."""
        return self.reason is not None

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until the request is cancelled or ``timeout`` seconds passed; returns
        whether it was cancelled. For plain (threaded) handlers."""
        return self._the_event().wait(timeout)

    def raise_if_cancelled(self) -> None:
        """Raises ``CallError("aborted", ...)`` if the request was cancelled."""
        if self.reason is not None:
            raise CallError("aborted", "Request %s" % self.reason)

    def _the_event(self) -> threading.Event:
        with _EVENTS:
            if self._event is None:
                self._event = threading.Event()
                if self.reason is not None:
                    self._event.set()
            return self._event

    def _cancel(self, reason: str) -> bool:
        with _EVENTS:
            if self.reason is not None:
                return False
            self.reason = reason
            if self._event is not None:
                self._event.set()
        return True


@dataclasses.dataclass
class Adapter:
    """An adapter: its services and how it is configured.

    ``configuration`` is a dataclass type initialize's configuration object is decoded
    into (unknown keys or wrong types answer initialize with ``invalid``); the instance is
    then :attr:`config`. Without it, :attr:`config` is the configuration ``dict``.
    ``on_initialize(config)``, plain or ``async``, runs before initialize is answered; a
    :class:`CallError` (or any exception: ``failed``) refuses the handshake and the host
    ends the connection (R26).
    """

    services: List[Service]
    configuration: Optional[type] = None
    on_initialize: Optional[Callable[[Any], Any]] = None
    logger: Logger = dataclasses.field(default_factory=Logger)
    #: The decoded configuration, set during initialize.
    config: Any = None

    def catalog(self) -> Dict[str, Any]:
        """The initialize result value, validated (R19-R25). Raises
        :class:`AdapterDefinitionError` for an invalid adapter."""
        if not isinstance(self.services, (list, tuple)):
            raise AdapterDefinitionError("services must be a list of Service")
        entries = []
        for s in self.services:
            if not isinstance(s, Service):
                raise AdapterDefinitionError("services must be a list of Service, not %r" % (s,))
            entries.append(s.catalog_entry())
        problem = validate_catalog(entries)
        if problem:
            raise AdapterDefinitionError("invalid catalog: " + problem)
        if self.configuration is not None and not dataclasses.is_dataclass(self.configuration):
            raise AdapterDefinitionError("configuration must be a dataclass type")
        return {"protocol": PROTOCOL_VERSION, "services": entries}


class _Call:
    __slots__ = ("ctx", "task", "threaded", "started")

    def __init__(self, ctx: RequestContext, threaded: bool = False) -> None:
        self.ctx = ctx
        self.task: Optional[asyncio.Task[None]] = None
        self.threaded = threaded  # a plain function: cancellation only sets the context
        # Whether the task's coroutine has begun: a task cancelled before that would
        # never run its code, and the request would get no reply.
        self.started = False

    def begin(self) -> None:
        """Marks the call started. If it was cancelled before, the cancellation is
        delivered at the handler's first await, as if it had come just after the start."""
        self.started = True
        if self.ctx.cancelled and not self.threaded and self.task is not None:
            self.task.cancel()


class _Connection:
    def __init__(self, adapter: Adapter, catalog: Dict[str, Any], out_fd: int) -> None:
        self.a = adapter
        self.log = adapter.logger
        self.catalog_text = json.dumps(catalog, ensure_ascii=False, separators=(",", ":"))
        self.methods: Dict[str, Method] = {}
        for s in adapter.services:
            self.methods.update(s.methods)
        self.loop = asyncio.get_running_loop()
        self.pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=MAX_IN_FLIGHT + 1, thread_name_prefix="adapterkit-handler"
        )
        self.state = "new"  # then "initializing", "ready" or "failed"
        self.last_id = 0
        self.calls: Dict[int, _Call] = {}  # requests in flight, initialize excluded
        self.init_call: Optional[_Call] = None
        self.closing = False
        self.abandoned = False
        self.done: asyncio.Future[Optional[BaseException]] = self.loop.create_future()
        self.writer = Writer(out_fd, self.loop, self._write_failed)
        self.spawned = 0  # tasks created to take their first step at the loop's next turn

    # --- input, on the loop ------------------------------------------------------------

    def feed(self, payloads: List[bytes]) -> None:
        spawned = self.spawned
        if sys.version_info >= (3, 12):
            # Handlers that do not wait answer while their request is dispatched (_spawn):
            # their replies leave together, at the end of this read.
            self.writer.hold()
        try:
            for p in payloads:
                if self.done.done():
                    break
                try:
                    self.dispatch(p)
                except ProtocolViolation as e:
                    self.end(e)
                    break
        finally:
            if sys.version_info >= (3, 12):
                self.writer.release()
        if self.spawned != spawned:
            # The new tasks' first steps run at the next turn of the loop, in order; a
            # flush scheduled behind them sends the replies they complete in that turn.
            self.writer.flush_soon()

    def end(self, cause: Optional[BaseException]) -> None:
        if not self.done.done():
            self.done.set_result(cause)

    def _write_failed(self, e: OSError) -> None:
        try:
            self.loop.call_soon_threadsafe(self.end, ProtocolViolation("writing to the host: %s" % e))
        except RuntimeError:
            pass

    def dispatch(self, payload: bytes) -> None:
        try:
            text = payload.decode("utf-8")
            req = compact_request(text)  # a valid request as hosts write it, or None
            if req is None:
                m = parse_object(text)
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise ProtocolViolation("a payload that is not one UTF-8 JSON object: %s" % e) from None
        if req is None:
            req = self._envelope(m)
            if req is None:
                return
        else:
            self._next_id(req[0])
        id_, method, params, start, end = req
        if method == INITIALIZE:
            self.initialize(id_, params)
            return
        if self.state != "ready":
            self.reply_error(id_, "invalid", "Adapter is not initialized")  # R27
            return
        h = self.methods.get(method)
        if h is None:
            self.reply_error(id_, "unavailable", "Unknown method")  # R42
            return
        if len(self.calls) >= MAX_IN_FLIGHT:
            self.reply_error(id_, "busy", "Too many requests in flight")  # R40
            return
        raw = text[start:end] if h.raw else ""
        call = _Call(RequestContext(id_, method, self.log), threaded=not h.is_async)
        self.calls[id_] = call
        call.task = self._spawn(self.run(id_, h, params, raw, call), eager=True)

    def _envelope(self, m: Dict[str, Tuple[Any, int, int]]) -> Optional[Tuple[int, str, Dict[str, Any], int, int]]:
        """Checks an envelope's members as parse_object returns them: a request's id,
        method, params and the params' span, or None when the envelope was a cancel or
        has been answered (R12)."""
        typ = m.get("type", (None,))[0]
        id_: Any = m.get("id", (None,))[0]
        if typ == "cancel":
            if m.keys() == CANCEL_FIELDS and _is_v1(m["v"][0]) and is_id(id_):
                self.cancel(id_)
            return None  # a malformed cancel is ignored (A4)
        if typ != "request":
            raise ProtocolViolation("an envelope of type %r from the host (A28)" % (typ,))
        if not is_id(id_):
            raise ProtocolViolation("a request without a valid id (A28)")
        self._next_id(id_)
        problem = _envelope_problem(m)
        if problem:
            self.reply_error(id_, "invalid", "Invalid request envelope: " + problem)  # R12
            return None
        params, start, end = m["params"]
        return id_, m["method"][0], params, start, end

    def _next_id(self, id_: int) -> None:
        """Takes a request's id, an integer from 1 up: at most MAX_ID and greater than
        every id before it (A28, A14)."""
        if id_ > MAX_ID:
            raise ProtocolViolation("a request without a valid id (A28)")
        if id_ <= self.last_id:
            raise ProtocolViolation("request id %d after %d (A14)" % (id_, self.last_id))
        self.last_id = id_

    def _spawn(self, coro: Any, eager: bool = False) -> asyncio.Task[None]:
        # The task is held by its _Call (in self.calls, or self.init_call) until its
        # reply is queued, its last act: no done callback, which cost every request a
        # second turn of the loop's ready queue.
        if sys.version_info >= (3, 12) and eager and self.loop.get_task_factory() is None:
            # Its first step runs now (a task all the same: asyncio.current_task and
            # asyncio.timeout work in it): a handler that does not wait is answered in
            # this turn of the loop, without a turn for the task to start.
            return asyncio.Task(coro, loop=self.loop, eager_start=True)
        self.spawned += 1
        return self.loop.create_task(coro)

    def _tasks(self) -> List[asyncio.Task[None]]:
        calls = list(self.calls.values()) + ([self.init_call] if self.init_call else [])
        return [c.task for c in calls if c.task is not None and not c.task.done()]

    def cancel(self, id_: int) -> None:
        call = self.calls.get(id_)
        if call is None and self.init_call is not None and self.init_call.ctx.id == id_:
            call = self.init_call
        if call is not None:
            self._cancel(call, CANCELED_BY_HOST)  # unknown and finished ids are ignored (R37)

    @staticmethod
    def _cancel(call: _Call, reason: str) -> None:
        if call.ctx._cancel(reason) and call.task is not None and call.started and not call.threaded:
            call.task.cancel()

    # --- output ------------------------------------------------------------------------

    def reply_error(self, id_: int, code: str, message: str) -> None:
        self.writer.put(error_frame(id_, code, message))

    # --- handshake ---------------------------------------------------------------------

    def initialize(self, id_: int, params: Dict[str, Any]) -> None:
        if self.state != "new":
            self.reply_error(id_, "invalid", "Adapter is already initialized")  # A7
            return
        self.state = "initializing"
        call = _Call(RequestContext(id_, INITIALIZE, self.log))
        self.init_call = call
        call.task = self._spawn(self.run_initialize(id_, params, call))

    async def run_initialize(self, id_: int, params: Dict[str, Any], call: _Call) -> None:
        try:
            call.begin()
            config = params.get("configuration")
            if type(params.get("protocol")) is not int or params["protocol"] != PROTOCOL_VERSION:
                raise CallError("invalid", "Invalid initialize params: protocol is not 1")
            if not isinstance(config, dict):
                raise CallError("invalid", "Invalid initialize params: configuration is not an object")
            if self.a.configuration is not None:
                try:
                    config = decode_value(self.a.configuration, config)
                except ParamsError as e:
                    raise CallError("invalid", "Invalid configuration: %s" % e) from None
            self.a.config = config
            if self.a.on_initialize is not None:
                r = self.a.on_initialize(config)
                if inspect.isawaitable(r):
                    await r
        except BaseException as e:  # noqa: B902 - every outcome gets a reply
            self.init_call = None
            self.state = "failed"
            code, message = self._error_of(e, call.ctx)
            self.log.warn("initialize refused", error=message, code=code)
            self.reply_error(id_, code, message)
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            return
        self.init_call = None
        self.state = "ready"  # before the reply is queued: a request sent on seeing it is served
        self.writer.put(result_frame(id_, self.catalog_text))

    # --- requests ----------------------------------------------------------------------

    async def run(self, id_: int, h: Method, params: Dict[str, Any], raw: str, call: _Call) -> None:
        ctx = call.ctx
        p: Any = None
        try:
            call.begin()
            try:
                p = h.decode(params, raw)
            except ParamsError as e:
                raise CallError("invalid", "params: %s" % e) from None
            args = (p, ctx) if h.wants_context else (p,)
            if h.is_async:
                value = await h.handler(*args)
            else:
                value = await self._shielded(self.loop.run_in_executor(self.pool, _call_sync, h.handler, args))
        except BaseException as e:  # noqa: B902 - exactly one reply per request (R16)
            code, message = self._error_of(e, ctx)
            self._complete(id_, error_frame(id_, code, message))
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            return
        try:
            if isinstance(value, RawJSON) and value is not p:  # params returned were valid
                json.loads(value)  # one JSON value, or ValueError
            frame = result_frame(id_, encode_value(value))
        except (TypeError, ValueError, RecursionError) as e:
            frame = error_frame(id_, "failed", "Result is not JSON: %s" % e)
        else:
            if len(frame) - 4 > MAX_FRAME:
                frame = error_frame(id_, "failed", "Result exceeds the adapter frame limit")
        self._complete(id_, frame)

    def _complete(self, id_: int, frame: bytes) -> None:
        # The slot is free before the reply can reach the host (R40).
        self.calls.pop(id_, None)
        self.writer.put(frame)

    def _error_of(self, e: BaseException, ctx: RequestContext) -> "tuple[str, str]":
        if isinstance(e, CallError):
            return e.code, e.message
        if isinstance(e, asyncio.CancelledError):
            return "aborted", "Request %s" % (ctx.reason or "canceled")
        if isinstance(e, (asyncio.TimeoutError, TimeoutError)):
            return "deadline", str(e) or "Deadline exceeded"
        self.log.error(
            "handler raised",
            method=ctx.method,
            id=ctx.id,
            error="%s: %s" % (type(e).__name__, e),
            stack="".join(traceback.format_exception(type(e), e, e.__traceback__)),
        )
        return "failed", "%s: %s" % (type(e).__name__, e) if str(e) else type(e).__name__

    async def _shielded(self, fut: "asyncio.Future[Any]") -> Any:
        # A plain handler cannot be interrupted: its task waits for the thread whatever
        # happens, so the slot is held until the function returns (R38). Only when the
        # connection is abandoned does the task stop waiting.
        while True:
            try:
                return await asyncio.shield(fut)
            except asyncio.CancelledError:
                if fut.done():
                    return fut.result()
                if self.abandoned:
                    raise

    # --- shutdown ----------------------------------------------------------------------

    async def shutdown(self) -> bool:
        """Cancels every handler, waits for them and flushes their replies, boundedly.
        Returns whether everything finished in time."""
        self.closing = True
        for call in list(self.calls.values()) + ([self.init_call] if self.init_call else []):
            self._cancel(call, DISCONNECTED)
        complete = True
        tasks = self._tasks()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=HANDLER_WAIT)
            if pending:
                complete = False
                self.log.warn("handlers did not return after the connection ended; abandoning them", count=len(pending))
        self.writer.flush()
        if not await self.loop.run_in_executor(None, self.writer.close, FLUSH_WAIT):
            complete = False
            self.log.warn("replies could not be written after the connection ended; abandoning them")
        self.abandoned = True
        for t in self._tasks():
            t.cancel()
        self.pool.shutdown(wait=False)
        return complete


def _is_v1(v: Any) -> bool:
    return type(v) is int and v == PROTOCOL_VERSION


def _envelope_problem(m: Dict[str, Any]) -> Optional[str]:
    if m.keys() != REQUEST_FIELDS:
        extra = sorted(set(m) - REQUEST_FIELDS)
        if extra:
            return 'unknown field (field "%s")' % extra[0]
        missing = sorted(REQUEST_FIELDS - set(m))
        if missing:
            return 'missing field (field "%s")' % missing[0]
    if not _is_v1(m["v"][0]):
        return 'v is not 1 (field "v")'
    if not isinstance(m["method"][0], str):
        return 'method is not a string (field "method")'
    if not isinstance(m["params"][0], dict):
        return 'params is not an object (field "params")'
    return None


def _call_sync(fn: Callable[..., Any], args: Any) -> Any:
    return fn(*args)




async def serve(adapter: Adapter, in_fd: int, out_fd: int) -> None:
    """Serves ``adapter`` over one connection: frames are read from ``in_fd`` and
    replies written to ``out_fd`` until the input ends (returns) or the host violates
    the protocol (raises :class:`ProtocolViolation`).

    The catalog is validated first; an invalid adapter raises
    :class:`AdapterDefinitionError` before anything is read (R19-R25). At the end every
    handler is cancelled and gets about a second to return; their replies are then
    flushed, and serve returns within 2 s of the end of input (R49). Threads of plain
    handlers that did not return are abandoned (:func:`adapterkit.run` exits anyway).
    """
    catalog = adapter.catalog()
    conn = _Connection(adapter, catalog, out_fd)
    if not read_on_loop(in_fd, conn.loop, conn):
        Reader(in_fd, conn.loop, conn)
    cause = await conn.done
    await conn.shutdown()
    if cause is not None:
        raise cause
