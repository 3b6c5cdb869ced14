"""A logger writing the JSON lines a host reads from an adapter's stderr.

Each record is one line in go-hclog's JSON format::

    {"@level":"info","@message":"ready","@module":"adapter","@timestamp":"2026-01-02T15:04:05.000000Z","probe":"inlet"}

Stderr is the only place an adapter may write to (stdout carries frames only, R6).
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import re
import sys
import threading
from typing import Any, Dict, Optional, TextIO

__all__ = ["LEVELS", "Logger", "JSONHandler"]

#: The levels, least severe first, with the names hclog writes; "off" writes nothing.
LEVELS = ("trace", "debug", "info", "warn", "error")
_RANK = {name: i for i, name in enumerate(LEVELS)}
_RANK["warning"] = _RANK["warn"]
_RANK["off"] = len(LEVELS)

#: The environment variable a host sets to choose adapters' log level.
LEVEL_ENV = "ADAPTERKIT_LOG_LEVEL"


def default_module() -> str:
    """The adapter's executable name without its version and extension, as the Go SDK
    names its logger (``pyecho`` for ``pyecho_v1.0.0``)."""
    name = os.path.basename(sys.argv[0] if sys.argv and sys.argv[0] else "adapter")
    name = re.sub(r"\.(exe|py|pyz)$", "", name)
    return re.sub(r"_v[0-9].*$", "", name) or "adapter"


def default_level() -> str:
    """``$ADAPTERKIT_LOG_LEVEL`` when it names a level (or ``off``), else ``info``."""
    level = os.environ.get(LEVEL_ENV, "").lower()
    return level if level in _RANK else "info"

_lock = threading.Lock()


def _timestamp() -> str:
    now = datetime.datetime.now().astimezone()
    s = now.strftime("%Y-%m-%dT%H:%M:%S.") + "%06d" % now.microsecond
    off = now.utcoffset() or datetime.timedelta(0)
    if not off:
        return s + "Z"
    minutes = int(off.total_seconds()) // 60
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return s + "%s%02d:%02d" % (sign, minutes // 60, minutes % 60)


def _plain(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, BaseException):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    return str(v)


def _line(level: str, module: str, message: str, fields: Dict[str, Any]) -> str:
    rec: Dict[str, Any] = {"@level": level, "@message": message}
    if module:
        rec["@module"] = module
    rec["@timestamp"] = _timestamp()
    for k, v in fields.items():
        if not k.startswith("@"):
            rec[k] = _plain(v)
    return json.dumps(rec, ensure_ascii=False, allow_nan=True, default=str)


class Logger:
    """Writes hclog JSON lines at or above ``level`` to ``stream`` (stderr by default).

    ``module`` defaults to :func:`default_module`, ``level`` to
    ``$ADAPTERKIT_LOG_LEVEL`` (``trace`` .. ``error``, ``off``; default ``info``), which
    the host sets. ``module`` is the ``@module`` of every line; :meth:`named` appends to it and
    :meth:`with_fields` adds fields to every line. Safe to use from any thread.
    """

    def __init__(
        self,
        module: Optional[str] = None,
        level: Optional[str] = None,
        stream: Optional[TextIO] = None,
        fields: Optional[Dict[str, Any]] = None,
    ) -> None:
        module = default_module() if module is None else module
        level = default_level() if level is None else level
        if level not in _RANK:
            raise ValueError("unknown log level %r (want one of %s)" % (level, ", ".join(LEVELS)))
        self.module = module
        self.level = "warn" if level == "warning" else level
        self._stream = stream
        self._fields = dict(fields or {})

    def enabled(self, level: str) -> bool:
        """Whether a record at ``level`` would be written."""
        return self.level != "off" and _RANK[level] >= _RANK[self.level]

    def log(self, level: str, message: str, **fields: Any) -> None:
        """Writes one record at ``level`` with ``fields``."""
        if not self.enabled(level):
            return
        if self._fields:
            fields = {**self._fields, **fields}
        line = _line("warn" if level == "warning" else level, self.module, message, fields)
        stream = self._stream if self._stream is not None else sys.__stderr__
        with _lock:
            try:
                stream.write(line + "\n")
                stream.flush()
            except (OSError, ValueError):
                pass  # a closed stderr must not break the adapter

    def trace(self, message: str, **fields: Any) -> None:
        """Logs at trace level."""
        self.log("trace", message, **fields)

    def debug(self, message: str, **fields: Any) -> None:
        """Logs at debug level."""
        self.log("debug", message, **fields)

    def info(self, message: str, **fields: Any) -> None:
        """Logs at info level."""
        self.log("info", message, **fields)

    def warn(self, message: str, **fields: Any) -> None:
        """Logs at warn level."""
        self.log("warn", message, **fields)

    warning = warn

    def error(self, message: str, **fields: Any) -> None:
        """Logs at error level."""
        self.log("error", message, **fields)

    def named(self, name: str) -> "Logger":
        """A logger whose module is this one's plus ``"." + name``."""
        module = self.module + "." + name if self.module else name
        return Logger(module, self.level, self._stream, self._fields)

    def with_fields(self, **fields: Any) -> "Logger":
        """A logger adding ``fields`` to every record."""
        return Logger(self.module, self.level, self._stream, {**self._fields, **fields})


# Formats a record's exception and traceback (logging.Handler has no formatException).
_FORMATTER = logging.Formatter()


class JSONHandler(logging.Handler):
    """A :mod:`logging` handler writing records as hclog JSON lines to stderr, so
    libraries that use the standard logging module are readable by the host too.
    ``@module`` is the record's logger name; ``extra`` fields are not copied."""

    def __init__(self, stream: Optional[TextIO] = None) -> None:
        super().__init__()
        self._stream = stream

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            level = "error"
        elif record.levelno >= logging.WARNING:
            level = "warn"
        elif record.levelno >= logging.INFO:
            level = "info"
        elif record.levelno >= logging.DEBUG:
            level = "debug"
        else:
            level = "trace"
        fields: Dict[str, Any] = {}
        if record.exc_info:
            fields["error"] = _FORMATTER.formatException(record.exc_info)
        Logger(record.name, "trace", self._stream).log(level, record.getMessage(), **fields)
