"""The wire format of the Adapter process protocol v1: frames and envelopes.

A frame is a 4-byte big-endian length and that many bytes of UTF-8 JSON (R1-R5). The
host sends ``request`` and ``cancel`` envelopes; the adapter answers with ``result`` and
``error`` (R9-R14).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import math
import re
from datetime import datetime
from json.decoder import scanstring  # type: ignore[attr-defined]  # the C scanner json uses; typeshed leaves it out
from typing import Any, Callable, Dict, List, Optional, Tuple, cast

from .errors import cap_message, normalize_code, scrub_surrogates

__all__ = [
    "MAX_FRAME",
    "MAX_ID",
    "MAX_IN_FLIGHT",
    "PROTOCOL_VERSION",
    "INITIALIZE",
    "RawJSON",
    "compact_request",
    "parse_object",
    "encode_value",
    "result_frame",
    "error_frame",
    "frame",
]

#: The largest payload, in bytes, the 4-byte prefix excluded (R3, A1).
MAX_FRAME = 4 << 20
#: The largest request id (R14).
MAX_ID = (1 << 53) - 1
#: Requests a connection runs at once; one more is answered busy (R40).
MAX_IN_FLIGHT = 32
#: The protocol version, also the envelopes' ``v`` (A5).
PROTOCOL_VERSION = 1
#: The handshake's method (R17).
INITIALIZE = "system.adapter.initialize"


class RawJSON(str):
    """JSON text passed through without decoding or re-encoding.

    Annotate a handler's params with ``RawJSON`` to receive the request's params object
    exactly as the host wrote it; return a ``RawJSON`` to send a result value verbatim.
    Numbers keep every digit this way (an integer beyond 2^53, a float literal).
    A returned ``RawJSON`` other than the params received is checked to be one JSON
    value before it is sent.
    """

    __slots__ = ()


_WS = re.compile(r"[ \t\n\r]*")


def _reject_constant(name: str) -> Any:
    raise ValueError("%s is not JSON" % name)


class _Float(float):
    """A JSON number with a fraction or an exponent, as it was written: params checks
    quote the literal ("got the number 1e3") and :class:`adapterkit.Number` keeps it."""

    __slots__ = ("literal",)
    literal: str

    def __new__(cls, literal: str) -> "_Float":
        f = float.__new__(cls, literal)
        f.literal = literal
        return f


class _Int(int):
    """-0, which is 0 to Python but not a number an unsigned integer takes (in Go)."""

    literal = "-0"


_MINUS_ZERO = _Int(0)


def _int(literal: str) -> int:
    return _MINUS_ZERO if literal == "-0" else int(literal)


class _Object(Dict[str, Any]):
    """A JSON object whose text named a member twice: ``twice`` is the first such name.
    Params checks refuse it, naming the member."""

    __slots__ = ("twice",)
    twice: str


def _pairs(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    d = dict(pairs)
    if len(d) == len(pairs):
        return d
    o = _Object(d)
    seen = set()
    for k, _ in pairs:
        if k in seen:
            o.twice = k
            break
        seen.add(k)
    return o


_DECODER = json.JSONDecoder(
    parse_constant=_reject_constant, parse_float=_Float, parse_int=_int, object_pairs_hook=_pairs
)
# The decoder's scanner: one JSON value from an offset, and the offset after it (typeshed
# leaves it out of JSONDecoder).
_SCAN: Callable[[str, int], Tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
# _WS matches the empty string too: its match is never None.
_ws = cast(Callable[[str, int], "re.Match[str]"], _WS.match)


_WS_CHARS = frozenset(" \t\n\r")


# A request envelope as hosts write it: compact, in this order, a plain method name. Its
# members are what the general parser below would return for the same text; anything
# else (white space, escapes, another order) is left to the general parser.
_COMPACT_REQUEST = re.compile(
    r'\{"type":("request"),"v":(1),"id":([1-9][0-9]{0,15}),"method":("[^"\\\x00-\x1f]*"),"params":'
)


def compact_request(text: str) -> Optional[Tuple[int, str, Dict[str, Any], int, int]]:
    """A request envelope as hosts write it, with params an object, as ``(id, method,
    params, start, end)``: ``text[start:end]`` is the params as written. The values are
    those :func:`parse_object` returns for the same text. None for anything else, which
    parse_object then parses (and says what is wrong with it)."""
    m = _COMPACT_REQUEST.match(text)
    if m is None:
        return None
    i = m.end()
    try:
        params, j = _SCAN(text, i)
    except (StopIteration, json.JSONDecodeError):
        return None
    if not isinstance(params, dict) or text[j:] != "}":
        return None
    return int(m.group(3)), m.group(4)[1:-1], params, i, j


def parse_object(text: str) -> Dict[str, Tuple[Any, int, int]]:
    """Parses a JSON object and returns its members as ``{key: (value, start, end)}``.

    ``text[start:end]`` is the member's value exactly as written. Raises ``ValueError``
    unless ``text`` is exactly one JSON object (whitespace around it allowed, A2).
    """
    # White space is skipped with the regular expression only where there is some: the
    # host writes compact JSON, and this runs for every frame.
    ws, wsc, scan = _ws, _WS_CHARS, _SCAN
    i = ws(text, 0).end()
    if text[i : i + 1] != "{":
        raise ValueError("not a JSON object")
    i += 1
    if text[i : i + 1] in wsc:
        i = ws(text, i).end()
    members: Dict[str, Tuple[Any, int, int]] = {}
    if text[i : i + 1] == "}":
        end = i + 1
    else:
        while True:
            if text[i : i + 1] != '"':
                raise ValueError("expected a member name at offset %d" % i)
            key, i = scanstring(text, i + 1, True)
            if text[i : i + 1] in wsc:
                i = ws(text, i).end()
            if text[i : i + 1] != ":":
                raise ValueError("expected ':' at offset %d" % i)
            i += 1
            if text[i : i + 1] in wsc:
                i = ws(text, i).end()
            try:
                value, j = scan(text, i)
            except StopIteration as e:
                raise ValueError(str(json.JSONDecodeError("Expecting value", text, e.value))) from None
            except json.JSONDecodeError as e:
                raise ValueError(str(e)) from None
            members[key] = (value, i, j)
            i = j
            if text[i : i + 1] in wsc:
                i = ws(text, i).end()
            c = text[i : i + 1]
            if c == ",":
                i += 1
                if text[i : i + 1] in wsc:
                    i = ws(text, i).end()
                continue
            if c == "}":
                end = i + 1
                break
            raise ValueError("expected ',' or '}' at offset %d" % i)
    if ws(text, end).end() != len(text):
        raise ValueError("data after the JSON object")
    return members


def _write(o: Any, out: List[str], ascii_only: bool) -> None:
    """Appends the JSON text of a typed result: dataclasses as objects (fields in their
    order), bytes as base64 (as Go writes []byte), a datetime as Go writes a time.Time
    (A41), a :class:`~adapterkit.Number` as its digits, integers exact."""
    from .params import Number

    if o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif isinstance(o, Number):
        out.append(str.__str__(o))
    elif isinstance(o, str):
        out.append(json.dumps(o, ensure_ascii=ascii_only))
    elif isinstance(o, int):
        out.append(int.__repr__(o))
    elif isinstance(o, float):
        if math.isnan(o) or math.isinf(o):
            raise ValueError("%r is not a JSON number" % o)
        out.append(float.__repr__(o))
    elif isinstance(o, (bytes, bytearray)):
        out.append('"' + base64.b64encode(o).decode("ascii") + '"')
    elif isinstance(o, datetime):
        from .params import time_text

        out.append('"' + time_text(o) + '"')
    elif dataclasses.is_dataclass(o) and not isinstance(o, type):
        _write_members(((f.name, getattr(o, f.name)) for f in dataclasses.fields(o)), out, ascii_only)
    elif isinstance(o, dict):
        for k in o:
            if not isinstance(k, str):
                raise TypeError("keys must be str, not %s" % type(k).__name__)
        _write_members(o.items(), out, ascii_only)
    elif isinstance(o, (list, tuple)):
        out.append("[")
        for i, v in enumerate(o):
            if i:
                out.append(",")
            _write(v, out, ascii_only)
        out.append("]")
    else:
        raise TypeError("%s is not JSON serializable" % type(o).__name__)


def _write_members(items: Any, out: List[str], ascii_only: bool) -> None:
    out.append("{")
    first = True
    for k, v in items:
        if not first:
            out.append(",")
        first = False
        out.append(json.dumps(k, ensure_ascii=ascii_only))
        out.append(":")
        _write(v, out, ascii_only)
    out.append("}")


def encode_value(value: Any) -> str:
    """Encodes a result value as compact JSON text (dataclasses as objects, bytes as
    base64, :class:`~adapterkit.Number` as its digits).

    Raises ``TypeError`` or ``ValueError`` when the value is not JSON (a NaN, a set),
    ``RecursionError`` when it nests too deeply. Lone surrogates in strings are escaped
    so that the text stays valid UTF-8.
    """
    if isinstance(value, RawJSON):
        return str(value)
    for ascii_only in (False, True):
        out: List[str] = []
        _write(value, out, ascii_only)
        text = "".join(out)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            continue
        return text
    return text


def frame(payload: bytes) -> bytes:
    """Prefixes ``payload`` with its 4-byte big-endian length (R1)."""
    return len(payload).to_bytes(4, "big") + payload


def result_frame(id_: int, value_text: str) -> bytes:
    """A framed result envelope carrying ``value_text`` (JSON text) as its value."""
    payload = ('{"type":"result","v":1,"id":%d,"value":' % id_ + value_text + "}").encode("utf-8")
    return frame(payload)


def error_frame(id_: int, code: str, message: str) -> bytes:
    """A framed error envelope; the code is normalised (R28) and the message capped (R30)."""
    msg = json.dumps(scrub_surrogates(cap_message(message)), ensure_ascii=False)
    payload = '{"type":"error","v":1,"id":%d,"code":"%s","message":%s}' % (id_, normalize_code(code), msg)
    return frame(payload.encode("utf-8"))


def is_id(x: Any) -> bool:
    """Whether ``x`` is a valid request id: an integer from 1 to 2^53-1 (R14, A6)."""
    return type(x) is int and 1 <= x <= MAX_ID


def looks_like_text(header: bytes) -> Optional[str]:
    """A hint when a frame header is printable text: someone typed or piped text."""
    if header and all(32 <= b < 127 or b in (9, 10, 13) for b in header):
        return (
            "the input reads as text, not as length-prefixed frames: an adapter is started "
            "by a host (try `adapterctl check PATH`), not fed text by hand"
        )
    return None
