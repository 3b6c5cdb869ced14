"""adapterkit: write adapters for the Adapter process protocol v1 in Python.

An adapter declares its services, registers a handler per method and calls :func:`run`::

    import adapterkit

    svc = adapterkit.Service("example.hello", 1)

    @svc.method("example.hello.greet")
    async def greet(params: dict) -> dict:
        return {"greeting": "hello, " + params.get("name", "world")}

    adapterkit.run(adapterkit.Adapter(services=[svc]))

The SDK does what the protocol asks of an adapter: the catalog is validated before
anything is read, initialize is answered with it (and its configuration decoded),
requests before it are refused, every request runs concurrently with a cancellation
signal that the host's ``cancel`` and the end of stdin trigger, a 33rd request in flight
is answered ``busy``, errors are mapped to the eight codes, unknown methods get
``unavailable``, host faults end the connection, the process exits within 2 s of the end
of stdin, and stdout is protected at the file-descriptor level.
"""

from .catalog import Service, validate_catalog
from .errors import (
    CODES,
    MAX_MESSAGE_BYTES,
    AdapterDefinitionError,
    CallError,
    ProtocolViolation,
    cap_message,
    normalize_code,
)
from .log import JSONHandler, Logger
from .main import protect_stdout, run
from .params import (
    Float32,
    Int8,
    Int16,
    Int32,
    Int64,
    Number,
    ParamsError,
    Time,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    decode_value,
)
from .server import Adapter, RequestContext, serve
from .wire import INITIALIZE, MAX_FRAME, MAX_ID, MAX_IN_FLIGHT, PROTOCOL_VERSION, RawJSON

__version__ = "1.0.0"

__all__ = [
    "Adapter",
    "AdapterDefinitionError",
    "CODES",
    "CallError",
    "Float32",
    "INITIALIZE",
    "Int16",
    "Int32",
    "Int64",
    "Int8",
    "JSONHandler",
    "Logger",
    "MAX_FRAME",
    "MAX_ID",
    "MAX_IN_FLIGHT",
    "MAX_MESSAGE_BYTES",
    "Number",
    "PROTOCOL_VERSION",
    "ParamsError",
    "ProtocolViolation",
    "RawJSON",
    "RequestContext",
    "Service",
    "Time",
    "Uint16",
    "Uint32",
    "Uint64",
    "Uint8",
    "cap_message",
    "decode_value",
    "normalize_code",
    "protect_stdout",
    "run",
    "serve",
    "validate_catalog",
]
