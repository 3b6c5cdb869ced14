#!/usr/bin/env python3
"""pyecho: an adapter written in Python with only the standard library.

It speaks the Adapter process protocol v1 itself, without any SDK: 4-byte big-endian
length-prefixed UTF-8 JSON frames on stdin and stdout, the initialize handshake, and the
request, cancel, result and error envelopes. Service example.pyecho version 1:

  example.pyecho.echo   returns its params unchanged
  example.pyecho.upper  {"text": STRING} -> {"text": STRING in upper case}
  example.pyecho.sleep  {"ms": 0..30000} -> {"ms": N} after N ms; a cancel ends it
                        early with aborted "Sleep canceled"

Run it without a shell (A31): make it executable and name it NAME_vX.Y.Z for discovery,
e.g. pyecho_v0.1.0. Anything printed goes to stderr; stdout carries frames only (R6).
"""
import json
import os
import queue
import struct
import sys
import threading

MAX_FRAME = 4 << 20          # R3, A1: payload bytes, prefix excluded
MAX_IN_FLIGHT = 32           # R40, A16
MAX_MESSAGE = 4096           # R30: bytes of UTF-8
MAX_ID = (1 << 53) - 1       # R14
MAX_SLEEP_MS = 30000         # the standard call deadline
SHUTDOWN_WAIT = 1.0          # R49: handlers get this long after stdin ends
INITIALIZE = "system.adapter.initialize"
SERVICE = "example.pyecho"
FIELDS = {"request": {"type", "v", "id", "method", "params"}, "cancel": {"type", "v", "id"}}


class CallError(Exception):
    """An error reply: one of the eight protocol codes and a message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code, self.message = code, message


class Violation(Exception):
    """A host fault that cannot be answered with an error reply: it ends the connection (A28)."""


def is_int(x):
    return type(x) is int  # bool is a subclass of int, and 1.0 is a float: neither is an id


def error(id_, code, message):
    """An error envelope; the message is capped at 4096 bytes on a character boundary (R30)."""
    message = message.encode("utf-8")[:MAX_MESSAGE].decode("utf-8", "ignore")
    return {"type": "error", "v": 1, "id": id_, "code": code, "message": message}


def encode(envelope):
    return json.dumps(envelope, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def no_constants(name):
    raise ValueError("%s is not JSON" % name)


# --- the service --------------------------------------------------------------------------

def echo(params, cancelled):
    return params


def upper(params, cancelled):
    if set(params) != {"text"} or not isinstance(params["text"], str):
        raise CallError("invalid", 'params must be {"text": string}')
    return {"text": params["text"].upper()}


def sleep(params, cancelled):
    if set(params) != {"ms"} or not is_int(params["ms"]) or not 0 <= params["ms"] <= MAX_SLEEP_MS:
        raise CallError("invalid", 'params must be {"ms": 0..%d}' % MAX_SLEEP_MS)
    if cancelled.wait(params["ms"] / 1000):
        raise CallError("aborted", "Sleep canceled")  # R38
    return {"ms": params["ms"]}


METHODS = {SERVICE + ".echo": echo, SERVICE + ".upper": upper, SERVICE + ".sleep": sleep}
CATALOG = {"protocol": 1, "services": [{"id": SERVICE, "version": 1, "methods": list(METHODS)}]}


# --- the protocol -------------------------------------------------------------------------

class Connection:
    def __init__(self, inp, out_fd):
        self.inp, self.out_fd = inp, out_fd
        self.frames = queue.Queue()        # the writer thread's queue: stdin is never blocked by stdout (R46)
        self.writer = threading.Thread(target=self.write_loop, daemon=True)
        self.writer.start()
        self.lock = threading.Lock()       # guards everything below
        self.state = "new"                 # then "ready", or "failed" after a refused initialize
        self.last_id = 0
        self.in_flight = {}                # id -> threading.Event set on cancel
        self.idle = threading.Condition(self.lock)

    def send(self, envelope):
        try:
            payload = encode(envelope)
        except ValueError as e:            # e.g. an echoed 1e400, which JSON cannot carry
            payload = encode(error(envelope["id"], "failed", "Result is not JSON: %s" % e))
        if len(payload) > MAX_FRAME:       # R3
            payload = encode(error(envelope["id"], "failed", "Result exceeds the adapter frame limit"))
        self.frames.put(struct.pack(">I", len(payload)) + payload)

    def write_loop(self):
        """The only writer of stdout: whole frames, one after another (R1)."""
        while True:
            frame = self.frames.get()
            if frame is None:
                return
            try:
                while frame:
                    frame = frame[os.write(self.out_fd, frame):]
            except OSError as e:
                print("pyecho: writing to the host: %s" % e, file=sys.stderr)
                os._exit(1)

    def read_exactly(self, n):
        data = bytearray()
        while len(data) < n:
            chunk = self.inp.read(n - len(data))
            if not chunk:
                if data:
                    raise Violation("input ended inside a frame")
                return None
            data += chunk
        return bytes(data)

    def serve(self):
        """Reads frames until stdin ends (returns) or the host breaks the protocol (raises)."""
        while True:
            header = self.read_exactly(4)
            if header is None:
                return
            (length,) = struct.unpack(">I", header)
            if length == 0 or length > MAX_FRAME:
                raise Violation("frame length %d" % length)  # R4, R5: the body is not read
            payload = self.read_exactly(length)
            if payload is None:
                raise Violation("input ended inside a frame")
            self.dispatch(payload)

    def dispatch(self, payload):
        try:
            env = json.loads(payload.decode("utf-8"), parse_constant=no_constants)
        except ValueError as e:
            raise Violation("payload is not UTF-8 JSON: %s" % e)
        if not isinstance(env, dict) or not isinstance(env.get("type"), str) or env["type"] not in FIELDS:
            raise Violation("not a request or cancel envelope")  # A28: wrong type, no id to answer
        id_ = env.get("id")
        valid_id = is_int(id_) and 1 <= id_ <= MAX_ID
        if env["type"] == "cancel":
            if set(env) == FIELDS["cancel"] and is_int(env["v"]) and env["v"] == 1 and valid_id:
                self.cancel(id_)
            return                          # a malformed cancel is ignored (A4)
        if not valid_id:
            raise Violation("request without a valid id")
        with self.lock:
            if id_ <= self.last_id:
                raise Violation("request id %d after %d" % (id_, self.last_id))  # A14
            self.last_id = id_
        problem = self.envelope_problem(env)
        if problem:
            return self.send(error(id_, "invalid", "Invalid request envelope: " + problem))  # R12
        method, params = env["method"], env["params"]
        if method == INITIALIZE:
            return self.initialize(id_, params)
        with self.lock:
            ready, busy = self.state == "ready", len(self.in_flight) >= MAX_IN_FLIGHT
        if not ready:
            return self.send(error(id_, "invalid", "Adapter is not initialized"))  # R27
        if method not in METHODS:
            return self.send(error(id_, "unavailable", "Unknown method"))  # R42
        if busy:
            return self.send(error(id_, "busy", "Too many requests in flight"))  # R40
        cancelled = threading.Event()
        with self.lock:
            self.in_flight[id_] = cancelled
        threading.Thread(target=self.run, args=(id_, METHODS[method], params, cancelled), daemon=True).start()

    @staticmethod
    def envelope_problem(env):
        extra, missing = set(env) - FIELDS["request"], FIELDS["request"] - set(env)
        if extra:
            return "unknown field %s" % sorted(extra)[0]
        if missing:
            return "missing field %s" % sorted(missing)[0]
        if not is_int(env["v"]) or env["v"] != 1:
            return "v is not 1"
        if not isinstance(env["method"], str):
            return "method is not a string"
        if not isinstance(env["params"], dict):
            return "params is not an object"
        return None

    def initialize(self, id_, params):
        ok = is_int(params.get("protocol")) and params["protocol"] == 1 \
            and isinstance(params.get("configuration"), dict)  # R17, A33
        with self.lock:
            first = self.state == "new"
            if first:
                self.state = "ready" if ok else "failed"
        if not first:
            return self.send(error(id_, "invalid", "Adapter is already initialized"))  # A7
        if not ok:
            return self.send(error(id_, "invalid", "Invalid initialize params"))
        self.send({"type": "result", "v": 1, "id": id_, "value": CATALOG})  # R19

    def run(self, id_, handler, params, cancelled):
        try:
            reply = {"type": "result", "v": 1, "id": id_, "value": handler(params, cancelled)}
        except CallError as e:
            reply = error(id_, e.code, e.message)
        except Exception as e:             # a bug in a handler fails one call, not the adapter
            reply = error(id_, "failed", "handler error: %r" % e)
        with self.lock:
            del self.in_flight[id_]        # the slot is free before the reply is seen
            self.idle.notify_all()
        self.send(reply)                   # exactly one reply per request (R16)

    def cancel(self, id_):
        with self.lock:
            event = self.in_flight.get(id_)
        if event:
            event.set()                    # unknown and finished ids are ignored (R37)

    def shutdown(self):
        """Cancels every handler and gives them a moment to reply (R49)."""
        with self.lock:
            for event in self.in_flight.values():
                event.set()
            self.idle.wait_for(lambda: not self.in_flight, SHUTDOWN_WAIT)
        self.frames.put(None)
        self.writer.join(SHUTDOWN_WAIT)    # flush the replies, boundedly


def main():
    out_fd = os.dup(1)                     # frames only (R6): a private, non-inheritable copy
    os.dup2(2, 1)                          # fd 1, print() and child processes now reach stderr
    sys.stdout = sys.stderr
    conn = Connection(sys.stdin.buffer.raw, out_fd)
    status = 0
    try:
        conn.serve()
    except Violation as e:
        print("pyecho: host protocol violation: %s" % e, file=sys.stderr)
        status = 1
    except OSError as e:
        print("pyecho: reading from the host: %s" % e, file=sys.stderr)
        status = 1
    conn.shutdown()
    os._exit(status)                       # daemon threads still waiting are abandoned


if __name__ == "__main__":
    main()
