"""In-process tests of the SDK's pieces: catalog rules, params, wire helpers, logger."""

import io
import json
import os
import sys
import unittest
from dataclasses import dataclass
from typing import Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import adapterkit  # noqa: E402
from adapterkit import AdapterDefinitionError, CallError, Logger, RawJSON, Service  # noqa: E402
from adapterkit.wire import error_frame, parse_object  # noqa: E402


def svc(id_, version, methods):
    return {"id": id_, "version": version, "methods": methods}


class Catalog(unittest.TestCase):
    def test_rules(self):
        good = [svc("a.b", 1, ["a.b.c"]), svc("a.c", 2, ["a.c.d", "a.c.e.f"])]
        self.assertIsNone(adapterkit.validate_catalog(good))
        self.assertIsNone(adapterkit.validate_catalog([]))  # A12
        bad = {
            "R20 one segment": [svc("ab", 1, ["ab.c"])],
            "R20 empty segment": [svc("a..b", 1, ["a..b.c"])],
            "R20 method empty segment": [svc("a.b", 1, ["a.b."])],
            "R21 system": [svc("system.x", 1, ["system.x.y"])],
            "R21 systemd": [svc("systemd.x", 1, ["systemd.x.y"])],
            "R22 version 0": [svc("a.b", 0, ["a.b.c"])],
            "R22 version bool": [svc("a.b", True, ["a.b.c"])],
            "R22 version float": [svc("a.b", 1.0, ["a.b.c"])],
            "R23 no methods": [svc("a.b", 1, [])],
            "R24 not prefixed": [svc("a.b", 1, ["a.bc.d"])],
            "R24 prefix without dot": [svc("conf.echo", 1, ["conf.echoX"])],
            "R25 service twice": [svc("a.b", 1, ["a.b.c"]), svc("a.b", 2, ["a.b.d"])],
            "R25 method twice": [svc("a.b", 1, ["a.b.c", "a.b.c"])],
        }
        for name, services in bad.items():
            with self.subTest(name):
                self.assertIsNotNone(adapterkit.validate_catalog(services))

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

    def test_bad(self):
        cases = {
            '"name": missing': {},
            '"other": unknown field': {"name": "x", "other": 1},
            '"name": expected a string, got the integer 1': {"name": 1},
            '"flag": expected a boolean': {"name": "x", "flag": 1},
            '"items[0].n": expected an integer, got the number 1.5': {"name": "x", "items": [{"n": 1.5}]},
            '"items[0].n": expected an integer, got a boolean': {"name": "x", "items": [{"n": True}]},
            '"extra.a"': {"name": "x", "extra": {"a": "1"}},
        }
        for want, value in cases.items():
            with self.subTest(want):
                with self.assertRaises(adapterkit.ParamsError) as cm:
                    adapterkit.decode_value(Params, value)
                self.assertIn(want, str(cm.exception))


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


if __name__ == "__main__":
    unittest.main()
