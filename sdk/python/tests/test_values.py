"""The shared value vectors (testdata/conformance/values.json at the repository's root,
docs/protocol.md A38-A44), run against this SDK: each type of the file declared as a
dataclass, each input decoded as params are, and the value written back as results are."""

import dataclasses
import json
import math
import os
import sys
import unittest
from datetime import datetime
from decimal import Decimal
from typing import Any, Dict, List, Optional

from harness import ROOT

sys.path.insert(0, ROOT)

import adapterkit  # noqa: E402
from adapterkit.wire import _DECODER, encode_value  # noqa: E402

with open(os.path.join(ROOT, "..", "..", "testdata", "conformance", "values.json"), encoding="utf-8") as f:
    DOC = json.load(f)

SCALARS = {
    "string": str,
    "bool": bool,
    "int8": adapterkit.Int8,
    "int16": adapterkit.Int16,
    "int32": adapterkit.Int32,
    "int64": int,
    "uint8": adapterkit.Uint8,
    "uint16": adapterkit.Uint16,
    "uint32": adapterkit.Uint32,
    "uint64": adapterkit.Uint64,
    "float32": adapterkit.Float32,
    "float64": float,
    "time.Time": datetime,
    "any": Any,
}
_classes: Dict[str, Any] = {}


def type_of(ty):
    """The annotation of a Go type as the vectors write it: what Go makes nil is Optional."""
    if ty in SCALARS:
        return SCALARS[ty]
    if ty == "[]byte":
        return Optional[bytes]
    if ty.startswith("*"):
        return Optional[type_of(ty[1:])]
    if ty.startswith("[]"):
        return Optional[List[type_of(ty[2:])]]
    if ty.startswith("map[string]"):
        return Optional[Dict[str, type_of(ty[len("map[string]") :])]]
    if ty not in _classes:
        _classes[ty] = dataclasses.make_dataclass(ty, [(n, type_of(m)) for n, m in DOC["types"][ty]])
    return _classes[ty]


def exact(text):
    """A JSON value with every number exact."""
    return json.loads(text, parse_float=Decimal, parse_int=Decimal)


class Values(unittest.TestCase):
    def test_cases(self):
        self.assertTrue(DOC["cases"])
        # A Go time is a datetime or, exact to the nanosecond, an adapterkit.Time.
        for time_type in (datetime, adapterkit.Time):
            SCALARS["time.Time"] = time_type
            _classes.clear()
            self.cases(time_type)

    def cases(self, time_type):
        for c in DOC["cases"]:
            with self.subTest("%s %s %s" % (c["rule"], c["name"], time_type.__name__)):
                tp = type_of(c["type"])
                try:
                    value = adapterkit.decode_value(tp, _DECODER.decode(c["input"]))
                except ValueError as e:  # a ParamsError, or text that is not JSON
                    if "output" in c:
                        self.fail("%s: %s" % (c["input"], e))
                    if "error" in c:
                        self.assertEqual(str(e), c["error"], c["input"])
                    else:
                        self.assertTrue(str(e).startswith(c["error_prefix"]), "%s: %s" % (c["input"], e))
                    continue
                self.assertIn("output", c, "%s: decoded, want a refusal" % c["input"])
                out = encode_value(value)
                self.assertEqual(exact(out), exact(c["output"]), "%s\n got %s\nwant %s" % (c["input"], out, c["output"]))

    def test_time_to_the_nanosecond(self):
        # What a datetime cannot hold, a Time keeps, as Go writes it; what Go refuses,
        # it refuses.
        for text, want in [
            ("2024-02-29T23:59:59.123456789+05:30", "2024-02-29T23:59:59.123456789+05:30"),
            ("2024-01-02T03:04:05.1234567891-00:00", "2024-01-02T03:04:05.123456789Z"),
            ("2024-01-02T03:04:05.000000000Z", "2024-01-02T03:04:05Z"),
            ("0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"),
        ]:
            self.assertEqual(adapterkit.decode_value(adapterkit.Time, text), want)
        for text in ["2023-02-29T00:00:00Z", "2024-01-02T24:00:00Z", "2024-01-02t03:04:05Z",
                     "2024-01-02T03:04:05+24:00", "2024-01-02T03:04:05"]:
            with self.assertRaisesRegex(adapterkit.ParamsError, "is not an RFC 3339 time"):
                adapterkit.decode_value(adapterkit.Time, text)
        with self.assertRaisesRegex(adapterkit.ParamsError, "expected an RFC 3339 time"):
            adapterkit.decode_value(adapterkit.Time, 5)

    def test_encode(self):
        floats = type_of("Floats")
        specials = {"NaN": math.nan, "+Inf": math.inf, "-Inf": -math.inf}
        self.assertTrue(DOC["encode"])
        for c in DOC["encode"]:
            with self.subTest("%s %s" % (c["rule"], c["name"])):
                with self.assertRaises(ValueError):
                    encode_value(floats(f32=0.0, f64=specials[c["f64"]]))


if __name__ == "__main__":
    unittest.main()
