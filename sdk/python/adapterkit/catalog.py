"""Services, their methods, and the catalog validation of R19-R25."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List, Optional

from .errors import AdapterDefinitionError
from .params import ParamsDecoder, params_decoder

__all__ = ["Service", "validate_catalog"]

Handler = Callable[..., Any]


class Method:
    """A registered method: its handler and how its params are decoded."""

    __slots__ = ("name", "handler", "decode", "raw", "is_async", "wants_context")

    def __init__(self, name: str, handler: Handler) -> None:
        if not callable(handler):
            raise AdapterDefinitionError("method %r: the handler is not callable" % name)
        self.name = name
        self.handler = handler
        self.is_async = inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(
            getattr(handler, "__call__", None)
        )
        try:
            sig = inspect.signature(handler)
        except (TypeError, ValueError) as e:
            raise AdapterDefinitionError("method %r: %s" % (name, e)) from None
        positional = [
            p
            for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        if len(positional) not in (1, 2):
            raise AdapterDefinitionError(
                "method %r: the handler must take (params) or (params, context), not %d arguments"
                % (name, len(positional))
            )
        self.wants_context = len(positional) == 2
        self.decode: ParamsDecoder = params_decoder(handler, positional[0].name, name)
        self.raw = bool(getattr(self.decode, "raw", False))  # wants the params' JSON text


class Service:
    """One service of the catalog: an id, a version and its methods.

    Register methods with the :meth:`method` decorator or :meth:`add`::

        svc = Service("example.device", 1)

        @svc.method("example.device.read")
        async def read(params: ReadParams, ctx: RequestContext) -> dict:
            ...

    A handler takes ``(params)`` or ``(params, context)``. ``async def`` handlers run as
    asyncio tasks, cancelled (``asyncio.CancelledError``) when the host cancels the
    request or disconnects; plain functions run in a thread pool and watch
    ``context.cancelled`` instead. The params are decoded according to the first
    parameter's annotation: a dataclass (fields checked, unknown keys refused with
    ``invalid``), :class:`RawJSON` (the JSON text unchanged), or anything else (the
    decoded ``dict``).
    """

    def __init__(self, id: str, version: int) -> None:
        self.id = id
        self.version = version
        self.methods: Dict[str, Method] = {}
        self._order: List[str] = []
        self._problems: List[str] = []

    def add(self, name: str, handler: Handler) -> None:
        """Registers ``handler`` for the method ``name`` (its full name, prefixed with the
        service id). Registering a name twice is a duplicate in the catalog (R25)."""
        self._order.append(name)
        if name in self.methods:
            return  # reported by validate_catalog as a duplicate
        self.methods[name] = Method(name, handler)

    def method(self, name: str) -> Callable[[Handler], Handler]:
        """A decorator registering the decorated function as the handler of ``name``."""

        def register(handler: Handler) -> Handler:
            self.add(name, handler)
            return handler

        return register

    def catalog_entry(self) -> Dict[str, Any]:
        """The service as it appears in the catalog: ``{"id", "version", "methods"}``."""
        return {"id": self.id, "version": self.version, "methods": list(self._order)}


def _dotted(name: Any) -> bool:
    return isinstance(name, str) and len(name.split(".")) >= 2 and all(name.split("."))


def validate_catalog(services: List[Any]) -> Optional[str]:
    """Returns why the catalog of ``services`` (catalog entries) is invalid, or None.

    Checks R20-R25 with the decisions A9-A11: ids and methods dotted with non-empty
    segments, nothing starting with "system", versions integers >= 1, non-empty method
    lists, every method prefixed by its service id and a dot, no service id and no
    method name twice.
    """
    if not isinstance(services, list):
        return "services is not a list"
    ids = set()
    methods = set()
    for s in services:
        if not isinstance(s, dict):
            return "a service is not an object"
        sid: Any = s.get("id")
        version, ms = s.get("version"), s.get("methods")
        if isinstance(sid, str) and sid.startswith("system"):  # R21 first, as the Go SDK
            return "service id %r starts with system (R21)" % sid
        if not _dotted(sid):
            return "service id %r is not dotted and namespaced (R20)" % (sid,)
        if type(version) is not int or version < 1:
            return "service %s: version %r is not an integer >= 1 (R22)" % (sid, version)
        if not isinstance(ms, list) or not ms:
            return "service %s has no methods (R23)" % sid
        if sid in ids:
            return "service id %s is duplicated (R25)" % sid
        ids.add(sid)
        for m in ms:
            if isinstance(m, str) and m.startswith("system"):
                return "method %r starts with system (R21)" % m
            if not _dotted(m):
                return "method %r is not dotted and namespaced (R20)" % (m,)
            if not m.startswith(sid + ".") or len(m) == len(sid) + 1:
                return "method %s is not prefixed by its service id %s (R24)" % (m, sid)
            if m in methods:
                return "method %s is duplicated (R25)" % m
            methods.add(m)
    return None
