"""The shared conformance vectors (testdata/conformance at the repository's root), run
against this SDK: the frames the echo adapter must answer word for word as the Go echo
does, and the catalogs its validation must accept or refuse by rule."""

import json
import os
import sys
import unittest
from concurrent.futures import ThreadPoolExecutor
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


def run_case(case):
    """Runs one frames case against a fresh echo process; returns what went wrong, or
    None."""
    a = Adapter(ECHO, parse=exact)
    try:
        if case.get("initialize", True):
            m = a.initialize(1)
            if m["type"] != "result":
                return "initialize: %r" % (m,)
        for f in case["send"]:
            a.send(f)
        got = {}
        for _ in case["expect"]:
            m = a.recv()
            got[int(m["id"])] = m
        for want in case["expect"]:
            m = got.get(want["id"])
            if m is None:
                return "no reply to id %d" % want["id"]
            if (m["type"], m.get("code")) != (want["type"], want.get("code")):
                return "got %r, want %s %s" % (m, want["type"], want.get("code"))
            if "message" in want and m["message"] != want["message"]:
                return "message\n got %r\nwant %r" % (m["message"], want["message"])
            if "value" in want and m["value"] != exact(want["value"]):
                return "value\n got %r\nwant %r" % (m["value"], exact(want["value"]))
        a.close_stdin()
        code, _ = a.wait_exit()
        return None if code == 0 else "exit status %d" % code
    finally:
        a.kill()


class Conformance(unittest.TestCase):
    def test_echo_frames(self):
        cases = load("echo.json")
        # A process per case (request ids only increase on a connection), a few at once.
        with ThreadPoolExecutor(max_workers=4) as pool:
            problems = list(pool.map(run_case, cases))
        for case, problem in zip(cases, problems):
            with self.subTest(case["name"]):
                self.assertIsNone(problem)

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
