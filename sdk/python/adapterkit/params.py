"""Decoding a request's params (or initialize's configuration) into typed values.

The rules, and the words of every refusal, are the Go SDK's (package codec), so that a
host sees the same ``invalid`` reply whichever language an adapter is written in:

- an unknown member is refused: ``field "x" is not known (known: a, b)``;
- a value of the wrong JSON kind: ``field "seq": expected an integer, got the number 1.5``;
- a number that does not fit: ``field "seq": 9223372036854775808 does not fit int64``;
- a member left out, or null (a member, a list element or a dict value), is the zero
  value of its type, as in Go (docs/protocol.md, A38-A39): ``0``, ``""``, ``False``,
  ``b""``, ``[]``, ``{}``, ``None`` for an ``Optional``, a dataclass of zero values, the
  zero time; a dataclass field with a default takes its default. Declare what Go
  declares nullable (a slice, map, pointer or ``[]byte``) ``Optional``, so that nil
  travels as ``null`` and comes back as ``None``;
- a ``datetime`` is an RFC 3339 string as Go's ``time.Time`` reads and writes it (A41),
  with a time zone; one that ``datetime`` cannot hold (a digit below the microsecond,
  year 0) is refused rather than rounded.

``int`` is a 64-bit signed integer, as the Go contract's ``int64``; :data:`Int8` ...
:data:`Uint64` name the other sizes; ``float`` is a 64-bit float and :data:`Float32` a
32-bit one; :class:`Number` keeps a number's literal digits (Go's ``json.Number``);
``bytes`` travel as base64 text, as Go's ``[]byte`` do.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import math
import re
import typing
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, NewType, Optional, Union

from .errors import AdapterDefinitionError
from .wire import RawJSON, _Object

__all__ = [
    "Float32",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "Number",
    "ParamsError",
    "Uint8",
    "Uint16",
    "Uint32",
    "Uint64",
    "decode_value",
    "params_decoder",
]

try:  # Python >= 3.10: int | None
    from types import UnionType as _UnionType  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.9
    _UnionType = None

_NoneType = type(None)

#: Integers of a given size: plain ``int`` values, checked against the size's range.
Int8 = NewType("Int8", int)
Int16 = NewType("Int16", int)
Int32 = NewType("Int32", int)
Int64 = NewType("Int64", int)
Uint8 = NewType("Uint8", int)
Uint16 = NewType("Uint16", int)
Uint32 = NewType("Uint32", int)
Uint64 = NewType("Uint64", int)
#: A number held as a 32-bit float (a plain ``float``; one beyond its range is refused).
Float32 = NewType("Float32", float)
#: A time (Go's ``time.Time``) kept as its RFC 3339 text, exact to the nanosecond, which
#: a ``datetime`` is not: a plain ``str``, checked as Go reads it (A41) and given to the
#: handler as Go writes it (the fraction without trailing zeros, ``Z`` for offset zero);
#: left out, the zero time ``"0001-01-01T00:00:00Z"``. Code generated from a Go
#: contract declares its times so.
Time = NewType("Time", str)

# The integer types by their Go names, with their ranges.
_INTS: Dict[Any, "tuple[str, int, int]"] = {
    int: ("int64", -(1 << 63), (1 << 63) - 1),
    Int64: ("int64", -(1 << 63), (1 << 63) - 1),
    Int32: ("int32", -(1 << 31), (1 << 31) - 1),
    Int16: ("int16", -(1 << 15), (1 << 15) - 1),
    Int8: ("int8", -(1 << 7), (1 << 7) - 1),
    Uint64: ("uint64", 0, (1 << 64) - 1),
    Uint32: ("uint32", 0, (1 << 32) - 1),
    Uint16: ("uint16", 0, (1 << 16) - 1),
    Uint8: ("uint8", 0, (1 << 8) - 1),
}
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# The smallest magnitude a 32-bit float rounds to infinity (max float32 + half an ulp).
_FLOAT32_LIMIT = 3.4028235677973366e38


class Number(str):
    """A JSON number kept as its literal text (``Number("1.50")``), written back as that
    number, digit for digit: Go's ``json.Number``. A string is refused for it."""

    __slots__ = ()

    def __new__(cls, literal: str) -> "Number":
        if not _NUMBER.fullmatch(literal):
            raise ValueError("%r is not a JSON number" % (literal,))
        return str.__new__(cls, literal)


class ParamsError(ValueError):
    """A value that does not fit the declared type; the message names the field."""


def _is_union(origin: Any) -> bool:
    return origin is Union or (_UnionType is not None and origin is _UnionType)


def _describe(tp: Any) -> str:
    if tp is bool:
        return "true or false"
    if tp in _INTS:
        return "an integer"
    if tp in (float, Float32, Number):
        return "a number"
    if tp is str:
        return "a string"
    if tp is bytes:
        return "a base64 string"
    if tp is datetime or tp is Time:
        return "an RFC 3339 time"
    origin = typing.get_origin(tp)
    if tp is list or origin is list:
        return "an array"
    if tp is dict or origin is dict or dataclasses.is_dataclass(tp):
        return "an object"
    if _is_union(origin):
        others = [a for a in typing.get_args(tp) if a is not _NoneType]
        return " or ".join(_describe(a) for a in others)
    return "any value"


def _excerpt(lit: str) -> str:
    return lit[:40] + "…" if len(lit) > 40 else lit


def _literal(value: Any) -> str:
    """The text of a number as the host wrote it (an integer's digits are its text)."""
    lit = getattr(value, "literal", None)
    return str(lit) if lit is not None else str(value) if isinstance(value, int) else repr(value)


def _got(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return "the number " + _excerpt(_literal(value))
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _field(path: str, name: str) -> str:
    return name if not path else path + "." + name


def _where(path: str) -> str:
    return ('field "%s": ' % path) if path else ""


def _mismatch(tp: Any, value: Any, path: str) -> ParamsError:
    return ParamsError("%sexpected %s, got %s" % (_where(path), _describe(tp), _got(value)))


def _range(value: Any, name: str, path: str) -> ParamsError:
    return ParamsError("%s%s does not fit %s" % (_where(path), _excerpt(_literal(value)), name))


def decode_value(tp: Any, value: Any, path: str = "") -> Any:
    """Checks the decoded JSON ``value`` against the type ``tp`` and builds it.

    Supported: bool, int and the sized integers (not a fraction, not a boolean), float
    and Float32 (an integer too), :class:`Number`, str, bytes (base64), None,
    list/List[T], dict/Dict[str, T], Optional/Union, dataclasses (unknown keys refused,
    a member left out or null leaves the field's default), Any. Raises
    :class:`ParamsError` in the Go SDK's words.
    """
    if tp is Any or tp is object:
        _check_any(value, path)
        return value
    if value is None and not _nullable(tp):
        return _zero(tp, path)
    origin = typing.get_origin(tp)
    if _is_union(origin):
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
        raise _mismatch(tp, value, path)
    if tp is bool:
        if type(value) is bool:
            return value
    elif tp in _INTS:
        if isinstance(value, int) and not isinstance(value, bool):
            name, lo, hi = _INTS[tp]
            if not lo <= value <= hi or (lo == 0 and getattr(value, "literal", None) == "-0"):
                raise _range(value, name, path)
            return int(value)
        if isinstance(value, float):  # 1.5, 1.0 and 1e3 alike: not an integer's literal
            raise ParamsError("%sexpected an integer, got the number %s" % (_where(path), _excerpt(_literal(value))))
    elif tp is float or tp is Float32:
        if type(value) is not bool and isinstance(value, (int, float)):
            try:
                f = float(value)
            except OverflowError:  # an integer beyond float64
                f = math.inf
            if math.isinf(f) or (tp is Float32 and abs(f) >= _FLOAT32_LIMIT):
                raise _range(value, "float32" if tp is Float32 else "float64", path)
            return f
    elif tp is Number:
        if type(value) is not bool and isinstance(value, (int, float)):
            return Number(_literal(value))
    elif tp is str:
        if isinstance(value, str):
            return str(value)
    elif tp is bytes:
        if isinstance(value, str):
            try:
                return base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise ParamsError(
                    "%sexpected a base64 string, got a string that is not base64" % _where(path)
                ) from None
    elif tp is datetime:
        if isinstance(value, str):
            return _time(value, path)
    elif tp is Time:
        if isinstance(value, str):
            return Time(_time_text(value, path))
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
            _twice(value, lambda k: "%s[%s]" % (path, k))
            return {k: decode_value(args[1], v, "%s[%s]" % (path, k)) for k, v in value.items()}
    elif dataclasses.is_dataclass(tp):
        if isinstance(value, dict):
            return _decode_dataclass(tp, value, path)
    else:
        return value  # a type the SDK does not check: the decoded JSON as is
    raise _mismatch(tp, value, path)


def _twice(value: Dict[str, Any], where: Callable[[str], str]) -> None:
    if isinstance(value, _Object):
        raise ParamsError('field "%s": appears twice' % where(value.twice))


def _check_any(value: Any, path: str) -> None:
    """Any value is taken as decoded, but as in Go a member named twice and a number
    beyond a float64 are refused."""
    if isinstance(value, float):
        if math.isinf(value):
            raise _range(value, "float64", path)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_any(v, "%s[%d]" % (path, i))
    elif isinstance(value, dict):
        _twice(value, lambda k: "%s[%s]" % (path, k))
        for k, v in value.items():
            _check_any(v, "%s[%s]" % (path, k))


_hints_cache: Dict[Any, Dict[str, Any]] = {}


def _hints(cls: Any) -> Dict[str, Any]:
    h = _hints_cache.get(cls)
    if h is None:
        h = typing.get_type_hints(cls)
        _hints_cache[cls] = h
    return h


def _nullable(tp: Any) -> bool:
    return tp is Any or tp is object or (_is_union(typing.get_origin(tp)) and _NoneType in typing.get_args(tp))


def _decode_dataclass(cls: Any, value: Dict[str, Any], path: str) -> Any:
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    _twice(value, lambda k: _field(path, k))
    kwargs = {}
    for k, v in value.items():  # in the order written: the first problem is the one named
        if k not in fields:
            raise ParamsError(
                'field "%s" is not known (known: %s)' % (_field(path, k), ", ".join(fields) or "none")
            )
        tp = hints.get(k, Any)
        if v is not None or _nullable(tp):
            kwargs[k] = decode_value(tp, v, _field(path, k))
    for name, f in fields.items():
        if name not in kwargs and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            kwargs[name] = _zero(hints.get(name, Any), _field(path, name))
    return cls(**kwargs)


#: The zero time of Go's time.Time.
_ZERO_TIME = datetime(1, 1, 1, tzinfo=timezone.utc)


def _zero(tp: Any, path: str) -> Any:
    """The value of a member left out, or null, of type ``tp`` (A38, A39): Go's zero
    value. A type without one (a union of two types) must be given."""
    if tp is bool:
        return False
    if tp in _INTS:
        return 0
    if tp is float or tp is Float32:
        return 0.0
    if tp is Number:
        return Number("0")
    if tp is str:
        return ""
    if tp is bytes:
        return b""
    if tp is datetime:
        return _ZERO_TIME
    if tp is Time:
        return Time("0001-01-01T00:00:00Z")
    if _nullable(tp) or tp is _NoneType:
        return None
    origin = typing.get_origin(tp)
    if tp is list or origin is list or tp is List:
        return []
    if tp is dict or origin is dict or tp is Dict:
        return {}
    if dataclasses.is_dataclass(tp):
        return _decode_dataclass(tp, {}, path)
    raise ParamsError('field "%s": missing' % path if path else "missing")


# An RFC 3339 time as Go's time.Time reads it (A41): upper-case T and Z, a fraction of
# any length, an offset with its colon.
_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:Z|([+-])([0-9]{2}):([0-9]{2}))"
)


def _time_text(text: str, path: str) -> str:
    """text as Go writes the time it reads from it, or a ParamsError where Go refuses it."""
    m = _RFC3339.fullmatch(text)
    bad = ParamsError("%s%s is not an RFC 3339 time" % (_where(path), json.dumps(_excerpt(text))))
    if m is None:
        raise bad
    y, mo, d, h, mi, s = (int(x) for x in m.group(1, 2, 3, 4, 5, 6))
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    days = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    if not (1 <= mo <= 12 and 1 <= d <= days[mo - 1] and h <= 23 and mi <= 59 and s <= 59):
        raise bad
    sign, oh, om = m.group(8), m.group(9), m.group(10)
    if sign is not None and (int(oh) > 23 or int(om) > 59):
        raise bad
    frac = (m.group(7) or "")[:9].rstrip("0")
    zone = "Z" if sign is None or (oh == "00" and om == "00") else "%s%s:%s" % (sign, oh, om)
    return text[:19] + ("." + frac if frac else "") + zone


def _time(text: str, path: str) -> datetime:
    m = _RFC3339.fullmatch(text)
    if m is None:
        raise ParamsError("%s%s is not an RFC 3339 time" % (_where(path), json.dumps(_excerpt(text))))
    y, mo, d, h, mi, s = (int(x) for x in m.group(1, 2, 3, 4, 5, 6))
    frac = (m.group(7) or "")[:9].ljust(9, "0")
    sign, oh, om = m.group(8), int(m.group(9) or 0), int(m.group(10) or 0)
    if oh > 23 or om > 59:
        raise ParamsError("%s%s is not an RFC 3339 time" % (_where(path), json.dumps(_excerpt(text))))
    if y == 0 or frac[6:] != "000":
        raise ParamsError("%s%s does not fit a datetime" % (_where(path), json.dumps(_excerpt(text))))
    off = timedelta(hours=oh, minutes=om)
    tz = timezone.utc if not off else timezone(-off if sign == "-" else off)
    try:
        return datetime(y, mo, d, h, mi, s, int(frac[:6]), tzinfo=tz)
    except ValueError:  # a day, hour, minute or second out of range
        raise ParamsError("%s%s is not an RFC 3339 time" % (_where(path), json.dumps(_excerpt(text)))) from None


def time_text(t: datetime) -> str:
    """A datetime as Go's time.Time writes it (A41): RFC 3339, the fraction without
    trailing zeros, Z for offset zero. A datetime without a time zone is refused
    (``ValueError``): a time on the wire names its offset."""
    off: Optional[timedelta] = t.utcoffset()
    if off is None:
        raise ValueError("%s has no time zone: a time is sent with its offset" % t.isoformat())
    s = "%04d-%02d-%02dT%02d:%02d:%02d" % (t.year, t.month, t.day, t.hour, t.minute, t.second)
    if t.microsecond:
        s += ("." + "%06d" % t.microsecond).rstrip("0")
    minutes = int(off.total_seconds()) // 60
    if minutes == 0:
        return s + "Z"
    sign = "-" if minutes < 0 else "+"
    return s + "%s%02d:%02d" % (sign, abs(minutes) // 60, abs(minutes) % 60)


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
