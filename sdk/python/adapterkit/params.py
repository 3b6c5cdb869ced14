"""Decoding a request's params (or initialize's configuration) into typed values."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Callable, Dict, List, Union

from .errors import AdapterDefinitionError
from .wire import RawJSON

__all__ = ["ParamsError", "decode_value", "params_decoder"]

try:  # Python >= 3.10: int | None
    from types import UnionType as _UnionType  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.9
    _UnionType = None  # type: ignore[assignment,misc]

_NoneType = type(None)


class ParamsError(ValueError):
    """A value that does not fit the declared type; the message names the field."""


def _describe(tp: Any) -> str:
    if tp is bool:
        return "a boolean"
    if tp is int:
        return "an integer"
    if tp is float:
        return "a number"
    if tp is str:
        return "a string"
    if tp is _NoneType:
        return "null"
    origin = typing.get_origin(tp)
    if tp is list or origin is list:
        return "an array"
    if tp is dict or origin is dict or dataclasses.is_dataclass(tp):
        return "an object"
    if origin is Union or (_UnionType is not None and origin is _UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(tp))
    return "a JSON value"


def _got(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "the integer %d" % value if abs(value) < 10**12 else "an integer"
    if isinstance(value, float):
        return "the number %r" % value
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _field(path: str, name: str) -> str:
    return name if not path else path + "." + name


def decode_value(tp: Any, value: Any, path: str = "") -> Any:
    """Checks the decoded JSON ``value`` against the type ``tp`` and builds it.

    Supported: bool, int (not a float, not a boolean), float (an integer too), str,
    None, list/List[T], dict/Dict[str, T], Optional/Union, dataclasses (unknown keys
    refused, missing fields without default refused), Any. Raises :class:`ParamsError`.
    """
    if tp is Any or tp is object or tp is None and value is None:
        return value
    origin = typing.get_origin(tp)
    where = ('field "%s": ' % path) if path else ""
    if origin is Union or (_UnionType is not None and origin is _UnionType):
        args = typing.get_args(tp)
        if value is None and _NoneType in args:
            return None
        others = [a for a in args if a is not _NoneType]
        if len(others) == 1:  # Optional[T]: T's own error names the field inside
            return decode_value(others[0], value, path)
        for a in others:
            try:
                return decode_value(a, value, path)
            except ParamsError:
                pass
        raise ParamsError("%sexpected %s, got %s" % (where, _describe(tp), _got(value)))
    if tp is bool:
        if type(value) is bool:
            return value
    elif tp is int:
        if type(value) is int:
            return value
    elif tp is float:
        if type(value) in (int, float):
            return float(value)
    elif tp is str:
        if isinstance(value, str):
            return value
    elif tp is _NoneType:
        if value is None:
            return None
    elif tp is list or origin is list or tp is List:
        if isinstance(value, list):
            args = typing.get_args(tp)
            if not args:
                return value
            return [decode_value(args[0], v, "%s[%d]" % (path, i)) for i, v in enumerate(value)]
    elif tp is dict or origin is dict or tp is Dict:
        if isinstance(value, dict):
            args = typing.get_args(tp)
            if len(args) != 2:
                return value
            return {k: decode_value(args[1], v, _field(path, k)) for k, v in value.items()}
    elif dataclasses.is_dataclass(tp):
        if isinstance(value, dict):
            return _decode_dataclass(tp, value, path)
    else:
        return value  # a type the SDK does not check: the decoded JSON as is
    raise ParamsError("%sexpected %s, got %s" % (where, _describe(tp), _got(value)))


_hints_cache: Dict[Any, Dict[str, Any]] = {}


def _hints(cls: Any) -> Dict[str, Any]:
    h = _hints_cache.get(cls)
    if h is None:
        h = typing.get_type_hints(cls)
        _hints_cache[cls] = h
    return h


def _decode_dataclass(cls: Any, value: Dict[str, Any], path: str) -> Any:
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    for k in value:
        if k not in fields:
            raise ParamsError('field "%s": unknown field' % _field(path, k))
    kwargs = {}
    for name, f in fields.items():
        if name in value:
            kwargs[name] = decode_value(hints.get(name, Any), value[name], _field(path, name))
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
            raise ParamsError('field "%s": missing' % _field(path, name))
    return cls(**kwargs)


ParamsDecoder = Callable[[Any, str], Any]


def params_decoder(handler: Callable[..., Any], param: str, method: str) -> ParamsDecoder:
    """Returns how a handler's params are decoded, from the annotation of its first
    parameter: ``decode(value, raw_text)``."""
    try:
        hints = typing.get_type_hints(handler)
    except Exception:  # unresolvable annotations: take the dict
        hints = {}
    tp = hints.get(param, Any)
    if tp is RawJSON:

        def raw_params(value: Any, raw: str) -> Any:
            return RawJSON(raw)

        raw_params.raw = True  # type: ignore[attr-defined]
        return raw_params
    if dataclasses.is_dataclass(tp):
        _hints(tp)  # resolve now: a mistake shows at registration
        return lambda value, raw: _decode_dataclass(tp, value, "")
    if tp in (Any, dict, object) or typing.get_origin(tp) is dict:
        return lambda value, raw: value
    raise AdapterDefinitionError(
        "method %r: params annotated %r: use a dataclass, dict or adapterkit.RawJSON" % (method, tp)
    )
