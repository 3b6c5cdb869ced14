"""Error codes and the errors an adapter or the SDK raises."""

from __future__ import annotations

__all__ = [
    "CODES",
    "MAX_MESSAGE_BYTES",
    "CallError",
    "AdapterDefinitionError",
    "ProtocolViolation",
    "normalize_code",
    "cap_message",
]

#: The eight error codes of the protocol (R28). Any other code is sent as ``failed``.
CODES = frozenset(
    ["invalid", "closed", "aborted", "denied", "unavailable", "busy", "failed", "deadline"]
)

#: The longest error message sent, in UTF-8 bytes (R30).
MAX_MESSAGE_BYTES = 4096


class CallError(Exception):
    """An error reply: raise it from a handler to answer with ``code`` and ``message``.

    ``code`` should be one of :data:`CODES`; anything else is sent as ``failed``. The
    message is capped at 4096 UTF-8 bytes on a character boundary when sent.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return "%s: %s" % (self.code, self.message)


class AdapterDefinitionError(ValueError):
    """The adapter cannot be served: an invalid catalog or a registration mistake.

    Raised before anything is read from the host (R19-R25).
    """


class ProtocolViolation(Exception):
    """The host broke the protocol in a way no error reply can answer (A14, A28).

    It ends the connection; :func:`adapterkit.run` then exits with status 1.
    """


def normalize_code(code: object) -> str:
    """Returns ``code`` if it is one of the eight codes, else ``"failed"`` (R28)."""
    return code if isinstance(code, str) and code in CODES else "failed"


def cap_message(message: str) -> str:
    """Caps ``message`` at 4096 UTF-8 bytes without splitting a character (R30).

    Lone surrogates, which UTF-8 cannot carry, become U+FFFD.
    """
    try:
        data = message.encode("utf-8")
    except UnicodeEncodeError:
        message = scrub_surrogates(message)
        data = message.encode("utf-8")
    if len(data) <= MAX_MESSAGE_BYTES:
        return message
    return data[:MAX_MESSAGE_BYTES].decode("utf-8", "ignore")


def scrub_surrogates(s: str) -> str:
    """Replaces lone surrogates (which UTF-8 cannot encode) with U+FFFD."""
    return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in s)
