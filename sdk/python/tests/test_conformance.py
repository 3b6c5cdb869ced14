"""The shared conformance vectors (testdata/conformance at the repository's root), run
against this SDK: the frames the echo adapter must answer word for word as the Go echo
does, and the catalogs its validation must accept or refuse by rule."""

import json
import os
import sys
import unittest
from decimal import Decimal

from harness import ECHO, ROOT, Adapter

sys.path.insert(0, ROOT)

import adapterkit  # noqa: E402

VECTORS = os.path.join(ROOT, "..", "..", "testdata", "conformance")


def load(name):
    with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
        doc = json.load(f)
    if not doc["cases"]:
        raise AssertionError("%s has no cases" % name)
    return doc["cases"]


def exact(text):
    """A JSON value with every number exact: 1e21 equals 1000000000000000000000, 2^53
    does not equal 2^53+1."""
    return json.loads(text, parse_float=Decimal, parse_int=Decimal)


class Conformance(unittest.TestCase):
    def test_echo_frames(self):
        for case in load("echo.json"):
            with self.subTest(case["name"]):
                a = Adapter(ECHO, parse=exact)
                self.addCleanup(a.kill)
                if case.get("initialize", True):
                    self.assertEqual(a.initialize(1)["type"], "result")
                for f in case["send"]:
                    a.send(f)
                got = {}
                for _ in case["expect"]:
                    m = a.recv()
                    got[int(m["id"])] = m
                for want in case["expect"]:
                    m = got.get(want["id"])
                    self.assertIsNotNone(m, "no reply to id %d" % want["id"])
                    self.assertEqual((m["type"], m.get("code")), (want["type"], want.get("code")), m)
                    if "message" in want:
                        self.assertEqual(m["message"], want["message"])
                    if "value" in want:
                        self.assertEqual(m["value"], exact(want["value"]))
                a.close_stdin()
                a.wait_exit()

    def test_catalogs(self):
        for case in load("catalogs.json"):
            with self.subTest(case["name"]):
                problem = adapterkit.validate_catalog(case["services"])
                if case["rule"] is None:
                    self.assertIsNone(problem)
                else:
                    self.assertIsNotNone(problem)
                    self.assertIn("(%s)" % case["rule"], problem)


if __name__ == "__main__":
    unittest.main()
