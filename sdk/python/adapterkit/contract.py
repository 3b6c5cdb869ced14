"""Method descriptors: what ``adapterctl contract gen -lang python`` writes for each
method of a Go contract, and how a handler is registered with one, its params and
result typed (for mypy) and both checked at run time with the contract's rules::

    import adapterkit
    from adapterkit.contract import implement
    from device import DEVICE_ID, DEVICE_VERSION, ReadMethod, ReadParams, ReadResult  # generated

    svc = adapterkit.Service(DEVICE_ID, DEVICE_VERSION)

    async def read(p: ReadParams, ctx: adapterkit.RequestContext) -> ReadResult:
        return ReadResult(probe=p.probe, celsius=21.5)

    implement(svc, ReadMethod, read)
"""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable, Generic, TypeVar, Union

from .catalog import Service
from .errors import CallError
from .params import ParamsError, decode_value
from .server import RequestContext
from .wire import _DECODER, RawJSON, encode_value

__all__ = ["Method", "implement"]

P = TypeVar("P")
R = TypeVar("R")


class Method(Generic[P, R]):
    """A method of a contract: its full name and the types of its params and result
    (a dataclass, or a type :func:`adapterkit.decode_value` checks)."""

    __slots__ = ("name", "params", "result")

    def __init__(self, name: str, params: Any, result: Any) -> None:
        self.name = name
        self.params = params
        self.result = result


def _checked(method: Method[Any, Any], value: Any) -> RawJSON:
    """The result's JSON text, once it is checked against the method's result type."""
    text = encode_value(value)
    try:
        decode_value(method.result, _DECODER.decode(text))
    except ParamsError as e:
        raise CallError("failed", "result does not fit the contract: %s" % e) from None
    return RawJSON(text)


def implement(
    svc: Service,
    method: Method[P, R],
    handler: Callable[[P, RequestContext], Union[R, Awaitable[R]]],
) -> None:
    """Registers ``handler`` for ``method`` on ``svc``: the params are decoded into
    ``method.params`` with the SDK's rules before the handler runs (a refusal answers
    ``invalid``), and the result is checked against ``method.result`` before it is sent
    (a result that does not fit the contract answers ``failed``, naming the member). A
    coroutine function runs on the event loop, a plain function in the SDK's threads."""
    if inspect.iscoroutinefunction(handler):

        async def call_async(params: Any, ctx: Any) -> Any:
            return _checked(method, await handler(_params(method, params), ctx))  # type: ignore[misc]

        call: Callable[..., Any] = call_async
    else:

        def call_sync(params: Any, ctx: Any) -> Any:
            return _checked(method, handler(_params(method, params), ctx))

        call = call_sync
    # The SDK passes the params object as parsed; _params decodes it (a dataclass, or
    # any other type of the contract, such as a map).
    call.__annotations__ = {"params": Any, "ctx": RequestContext, "return": Any}
    svc.add(method.name, call)


def _params(method: Method[Any, Any], value: Any) -> Any:
    try:
        return decode_value(method.params, value)
    except ParamsError as e:
        raise CallError("invalid", "params: %s" % e) from None
