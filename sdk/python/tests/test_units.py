"""In-process tests of the SDK's pieces: catalog rules, params, wire helpers, logger."""

import io
import json
import os
import sys
import unittest
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Dict, List, Optional, Union

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import adapterkit  # noqa: E402
from adapterkit import AdapterDefinitionError, CallError, Logger, RawJSON, Service  # noqa: E402
from adapterkit.wire import encode_value, error_frame, parse_object  # noqa: E402


class Catalog(unittest.TestCase):
    def test_adapter_refuses_bad_catalog(self):
        s = Service("example.x", 1)
        s.add("example.x.y", lambda p: p)
        s.add("example.x.y", lambda p: p)
        with self.assertRaises(AdapterDefinitionError):
            adapterkit.Adapter(services=[s]).catalog()
        with self.assertRaises(AdapterDefinitionError):
            adapterkit.Adapter(services=[Service("example.x", 1)]).catalog()  # R23

    def test_handler_signatures(self):
        s = Service("example.x", 1)
        with self.assertRaises(AdapterDefinitionError):
            s.add("example.x.a", lambda: None)
        with self.assertRaises(AdapterDefinitionError):
            s.add("example.x.b", lambda a, b, c: None)

        def typed(p: int) -> int:
            return p

        with self.assertRaises(AdapterDefinitionError):
            s.add("example.x.c", typed)


@dataclass
class Inner:
    n: int


@dataclass
class Unioned:
    u: Union[int, str]


@dataclass
class Params:
    name: str
    ratio: float = 1.0
    flag: bool = False
    items: Optional[List[Inner]] = None
    extra: Optional[Dict[str, int]] = None


class Decode(unittest.TestCase):
    def test_good(self):
        p = adapterkit.decode_value(Params, {"name": "x", "ratio": 2, "items": [{"n": 1}], "extra": {"a": 1}})
        self.assertEqual(p, Params("x", 2.0, False, [Inner(1)], {"a": 1}))

    def test_python_types(self):
        # What the shared vectors (test_conformance) cannot say: the Python types.
        p = adapterkit.decode_value(Params, {"name": "x", "items": None, "extra": None})
        self.assertEqual(p, Params("x"))
        self.assertEqual(adapterkit.decode_value(bytes, "AAH+/w=="), b"\x00\x01\xfe\xff")
        self.assertEqual(adapterkit.decode_value(adapterkit.Uint64, 2**64 - 1), 2**64 - 1)
        # A38, A39: left out or null, a member without a default is its zero value.
        self.assertEqual(adapterkit.decode_value(Params, {}), Params(""))
        self.assertEqual(adapterkit.decode_value(List[Inner], [None, {"n": None}]), [Inner(0), Inner(0)])
        with self.assertRaisesRegex(adapterkit.ParamsError, '^field "u": missing$'):
            adapterkit.decode_value(Unioned, {})
        # A41: a datetime holds microseconds and years 1-9999, and refuses what it cannot hold.
        t = adapterkit.decode_value(datetime, "2024-01-02T03:04:05.123456+05:30")
        self.assertEqual((t.microsecond, t.utcoffset()), (123456, timedelta(hours=5, minutes=30)))
        self.assertEqual(encode_value(t), '"2024-01-02T03:04:05.123456+05:30"')
        for text in ("2024-01-02T03:04:05.1234567Z", "0000-01-01T00:00:00Z"):
            with self.assertRaisesRegex(adapterkit.ParamsError, "does not fit a datetime$"):
                adapterkit.decode_value(datetime, text)
        self.assertEqual(adapterkit.decode_value(datetime, "2024-01-02T03:04:05.1234560009Z").microsecond, 123456)
        with self.assertRaisesRegex(ValueError, "no time zone"):
            encode_value(datetime(2024, 1, 2))
        with self.assertRaisesRegex(adapterkit.ParamsError, r'^field "\[x\]": expected an integer, got a string$'):
            adapterkit.decode_value(Dict[str, int], {"x": "1"})
        with self.assertRaises(ValueError):
            adapterkit.Number("1.")


class Wire(unittest.TestCase):
    def test_parse_object_spans(self):
        text = ' { "a" : 1.50 , "b":{"c":[1, 2]} ,"d":"\\u00e9"} '
        m = parse_object(text)
        self.assertEqual({k: text[s:e] for k, (_, s, e) in m.items()}, {"a": "1.50", "b": '{"c":[1, 2]}', "d": '"\\u00e9"'})
        self.assertEqual(m["d"][0], "é")
        for bad in ["[]", "{", '{"a":1} x', '{"a":NaN}', '{"a" 1}', "", '{"a":1,}']:
            with self.subTest(bad):
                with self.assertRaises(ValueError):
                    parse_object(bad)

    def test_error_frame(self):
        def decode(frame):
            self.assertEqual(int.from_bytes(frame[:4], "big"), len(frame) - 4)
            return json.loads(frame[4:].decode("utf-8"))

        m = decode(error_frame(7, "Busy", "x"))
        self.assertEqual((m["code"], m["message"], m["id"]), ("failed", "x", 7))  # R28, A21
        m = decode(error_frame(7, "busy", "€" * 2000))  # 6000 bytes
        self.assertEqual(m["message"], "€" * 1365)  # 4095 bytes: no split character (R30)
        m = decode(error_frame(7, "busy", "a\ud800b"))
        self.assertEqual(m["message"], "a\ufffdb")

    def test_cap_message(self):
        self.assertEqual(adapterkit.cap_message("x" * 5000), "x" * 4096)
        self.assertEqual(adapterkit.cap_message("ok"), "ok")
        self.assertEqual(adapterkit.normalize_code("deadline"), "deadline")
        self.assertEqual(adapterkit.normalize_code("DEADLINE"), "failed")

    def test_call_error(self):
        e = CallError("denied", "no")
        self.assertEqual((e.code, e.message, str(e)), ("denied", "no", "denied: no"))

    def test_raw_json_is_str(self):
        self.assertEqual(RawJSON('{"a":1}'), '{"a":1}')


    def test_compact_request_fast_path_is_the_general_parser(self):
        from adapterkit.wire import compact_request

        base = '{"type":"request","v":1,"id":%s,"method":%s,"params":%s}'
        cases = [
            base % ("12345", '"example.echo.echo"', '{"probe":"inlet","n":12345,"ok":true}'),
            base % ("1", '"a"', '{"a":1,"a":2}'),  # a member twice: the params remember it
            base % ("1", '"\u00e9 x"', '{"x":-0,"y":1.50}'),
            base % ("9007199254740993", '"a"', "{}"),
            base % ("1", '"a"', "null"),
            base % ("1", '"a"', '{"a":NaN}'),
            base % ("1", '"a"', '{"a":1}') + "x",
            (base % ("1", '"a"', "{}"))[:-1],
            base % ("1", '"a"', '{},"params":{"b":1}'),
        ]

        def described(v):
            return repr(v), type(v).__name__, getattr(v, "twice", None)

        taken = 0
        for text in cases:
            with self.subTest(text):
                try:
                    req = compact_request(text)
                except ValueError as e:  # the same error as the general parser's
                    with self.assertRaises(ValueError) as general:
                        parse_object(text)
                    self.assertEqual(str(general.exception), str(e))
                    continue
                if req is None:
                    continue  # the general parser's alone
                taken += 1
                id_, method, params, start, end = req
                m = parse_object(text)
                self.assertEqual(sorted(m), ["id", "method", "params", "type", "v"])
                self.assertEqual((m["type"][0], described(m["v"][0])), ("request", described(1)))
                self.assertEqual(described(m["id"][0]), described(id_))
                self.assertEqual(described(m["method"][0]), described(method))
                self.assertEqual((described(m["params"][0]),) + m["params"][1:], (described(params), start, end))
        self.assertEqual(compact_request(cases[0])[:2], (12345, "example.echo.echo"))
        self.assertEqual(taken, 4)  # the first four; the rest are not valid requests


class Logging(unittest.TestCase):
    def test_hclog_json_lines(self):
        out = io.StringIO()
        log = Logger("adapter", "info", out)
        log.debug("hidden")
        log.named("probe").with_fields(probe="inlet").warn("slow", ms=12, err=ValueError("x"))
        lines = out.getvalue().splitlines()
        self.assertEqual(len(lines), 1)
        rec = json.loads(lines[0])
        self.assertEqual(list(rec)[:4], ["@level", "@message", "@module", "@timestamp"])
        self.assertEqual(
            {k: rec[k] for k in ("@level", "@message", "@module", "probe", "ms", "err")},
            {"@level": "warn", "@message": "slow", "@module": "adapter.probe", "probe": "inlet", "ms": 12, "err": "x"},
        )
        self.assertRegex(rec["@timestamp"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$")
        with self.assertRaises(ValueError):
            Logger(level="loud")

    def test_stdlib_handler(self):
        import logging

        out = io.StringIO()
        lg = logging.getLogger("adapterkit.test")
        lg.propagate = False
        lg.addHandler(adapterkit.JSONHandler(out))
        lg.setLevel(logging.DEBUG)
        lg.error("bad %s", "thing")
        rec = json.loads(out.getvalue())
        self.assertEqual((rec["@level"], rec["@message"], rec["@module"]), ("error", "bad thing", "adapterkit.test"))

    def test_stdlib_handler_exception(self):
        # logger.exception: the record's traceback goes in the "error" field.
        import logging

        out = io.StringIO()
        lg = logging.getLogger("adapterkit.test.exc")
        lg.propagate = False
        lg.addHandler(adapterkit.JSONHandler(out))
        try:
            raise KeyError("probe")
        except KeyError:
            lg.exception("lookup failed")
        rec = json.loads(out.getvalue())
        self.assertEqual(rec["@message"], "lookup failed")
        self.assertIn("KeyError: 'probe'", rec["error"])


class Packaging(unittest.TestCase):
    def test_ships_py_typed(self):
        # PEP 561: type checkers read the package's annotations only with this marker.
        pkg = os.path.dirname(adapterkit.__file__)
        self.assertTrue(os.path.isfile(os.path.join(pkg, "py.typed")))


if __name__ == "__main__":
    unittest.main()


class BuildAdapter(unittest.TestCase):
    """tools/build_adapter.py: the "#!" line names the interpreter by its absolute path,
    since a host starts an adapter with an empty environment (no PATH)."""

    TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "build_adapter.py")
    ECHO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "echo.py")

    def build(self, *args):
        import subprocess
        import tempfile

        d = tempfile.mkdtemp()
        self.addCleanup(__import__("shutil").rmtree, d)
        out = os.path.join(d, "pyecho_v1.0.0")
        r = subprocess.run([sys.executable, self.TOOL, *args, self.ECHO, out], capture_output=True)
        return out, r

    def test_shebang_is_this_python_and_runs_without_environment(self):
        import subprocess

        out, r = self.build()
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.readline(), b"#!" + os.fsencode(sys.executable) + b"\n")
        # Started as a host starts it: no environment at all; at EOF it exits 0.
        p = subprocess.run([out], env={}, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_python_flag(self):
        out, r = self.build("--python", "/usr/bin/env python3")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.readline(), b"#!/usr/bin/env python3\n")
        _, r = self.build("--python", "python3")
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"not an absolute path", r.stderr)


class Pipes(unittest.TestCase):
    """The frames' descriptors: whatever the input is, every request gets its reply."""

    @staticmethod
    def frames(*envelopes):
        out = b""
        for e in envelopes:
            p = json.dumps(e).encode()
            out += len(p).to_bytes(4, "big") + p
        return out

    def serve(self, in_fd):
        import asyncio

        svc = Service("t.echo", 1)

        @svc.method("t.echo.echo")
        async def echo(params: RawJSON) -> RawJSON:
            return params

        r, w = os.pipe()
        self.addCleanup(os.close, r)
        try:
            adapter = adapterkit.Adapter(services=[svc], logger=Logger(io.StringIO()))
            asyncio.run(asyncio.wait_for(adapterkit.serve(adapter, in_fd, w), 20))  # an unread input fails, not hangs
        finally:
            os.close(w)
        data, got = b"", []
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
        while data:
            n = int.from_bytes(data[:4], "big")
            got.append(json.loads(data[4 : 4 + n]))
            data = data[4 + n :]
        return got

    def requests(self):
        return self.frames(
            {"type": "request", "v": 1, "id": 1, "method": "system.adapter.initialize", "params": {"protocol": 1, "configuration": {}}},
            {"type": "request", "v": 1, "id": 2, "method": "t.echo.echo", "params": {"a": [1, 2]}},
        )

    def check(self, got):
        # Both read and answered; the second came before initialize was answered (R27).
        got.sort(key=lambda g: g["id"])
        self.assertEqual([(g["type"], g["id"]) for g in got], [("result", 1), ("error", 2)], got)
        self.assertEqual(got[0]["value"]["services"][0]["id"], "t.echo")
        self.assertEqual(got[1]["message"], "Adapter is not initialized")

    def test_regular_file_input(self):
        # The event loop cannot watch a regular file: a thread reads it instead.
        import tempfile

        with tempfile.TemporaryFile() as f:
            f.write(self.requests())
            f.flush()
            f.seek(0)
            self.check(self.serve(f.fileno()))

    def test_pipe_input(self):
        r, w = os.pipe()
        self.addCleanup(os.close, r)
        os.write(w, self.requests())
        os.close(w)
        self.check(self.serve(r))

    def test_a_handler_that_does_not_wait_starts_in_the_read_from_python_3_12(self):
        # From Python 3.12 a request's task takes its first step as it is created, in
        # the turn of the loop that read the request (eager_start); before, at the next.
        import asyncio
        import inspect

        svc = Service("t.echo", 1)
        seen = []

        @svc.method("t.echo.echo")
        async def echo(params: RawJSON) -> RawJSON:
            seen.append((asyncio.current_task() is not None, any(f.function == "feed" for f in inspect.stack())))
            return params

        async def main():
            loop = asyncio.get_running_loop()
            in_r, in_w = os.pipe()
            out_r, out_w = os.pipe()
            adapter = adapterkit.Adapter(services=[svc], logger=Logger(io.StringIO()))
            served = asyncio.ensure_future(adapterkit.serve(adapter, in_r, out_w))
            replies = []
            for envelope in (
                {"type": "request", "v": 1, "id": 1, "method": "system.adapter.initialize", "params": {"protocol": 1, "configuration": {}}},
                {"type": "request", "v": 1, "id": 2, "method": "t.echo.echo", "params": {"a": [1, 2]}},
            ):  # one at a time, each after the reply to the one before
                os.write(in_w, self.frames(envelope))
                head = await loop.run_in_executor(None, os.read, out_r, 4)
                replies.append(json.loads(await loop.run_in_executor(None, os.read, out_r, int.from_bytes(head, "big"))))
            os.close(in_w)
            await asyncio.wait_for(served, 20)
            for fd in (in_r, out_r, out_w):
                os.close(fd)
            return replies

        replies = asyncio.run(asyncio.wait_for(main(), 20))
        self.assertEqual([(m["type"], m["id"]) for m in replies], [("result", 1), ("result", 2)], replies)
        self.assertEqual(replies[1]["value"], {"a": [1, 2]})
        self.assertEqual(seen, [(True, sys.version_info >= (3, 12))])
