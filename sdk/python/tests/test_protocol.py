"""The adapter's side of the protocol, over real pipes to real processes.

Each test names the rules of docs/protocol.md it checks.
"""

import json
import os
import pty
import subprocess
import sys
import unittest

from harness import ECHO, FIXTURE, ROOT, WAIT, Adapter


class EchoProtocol(unittest.TestCase):
    def setUp(self):
        self.a = Adapter(ECHO)
        self.addCleanup(self.a.kill)

    def want_error(self, id_, code):
        m = self.a.recv()
        self.assertEqual((m["type"], m["id"], m["code"]), ("error", id_, code), m)
        return m

    def test_handshake_and_refusals(self):
        a = self.a
        a.request(1, "example.echo.echo")  # R27: before initialize
        self.assertEqual(self.want_error(1, "invalid")["message"], "Adapter is not initialized")
        m = a.initialize(2)  # R19
        self.assertEqual(m["type"], "result")
        self.assertEqual(
            m["value"],
            {
                "protocol": 1,
                "services": [
                    {
                        "id": "example.echo",
                        "version": 1,
                        "methods": [
                            "example.echo.echo",
                            "example.echo.sleep",
                            "example.echo.fail",
                            "example.echo.big",
                            "example.echo.record",
                            "example.echo.blob",
                            "example.echo.exact",
                        ],
                    }
                ],
            },
        )
        m = a.initialize(3)  # A7: a second initialize
        self.assertEqual((m["type"], m["id"], m["code"]), ("error", 3, "invalid"))
        # R12, A4: unknown, missing fields and a wrong v are refused, never executed.
        a.send('{"type":"request","v":1,"id":4,"method":"example.echo.echo","params":{},"extra":1}')
        self.want_error(4, "invalid")
        a.send('{"type":"request","v":1,"id":5,"method":"example.echo.echo"}')
        self.want_error(5, "invalid")
        a.send('{"type":"request","v":2,"id":6,"method":"example.echo.echo","params":{}}')
        self.want_error(6, "invalid")
        a.send('{"type":"request","v":1,"id":7,"method":"example.echo.echo","params":[]}')
        self.want_error(7, "invalid")
        a.request(8, "example.echo.nope")  # R42
        self.assertEqual(self.want_error(8, "unavailable")["message"], "Unknown method")
        # R37: cancels of unknown ids and malformed cancels get no reply.
        a.cancel(99)
        a.send('{"type":"cancel","v":1,"id":9,"extra":true}')
        a.request(9, "example.echo.echo", {"ok": True})
        self.assertEqual(a.recv(), {"type": "result", "v": 1, "id": 9, "value": {"ok": True}})
        # Typed params: unknown keys and wrong types are invalid, with the field named.
        a.request(10, "example.echo.sleep", {"ms": "1"})
        self.assertIn('"ms"', self.want_error(10, "invalid")["message"])
        a.request(11, "example.echo.sleep", {"ms": 1, "x": 1})
        self.assertIn('"x"', self.want_error(11, "invalid")["message"])
        a.request(12, "example.echo.sleep", {"ms": 1.5})
        self.want_error(12, "invalid")
        a.request(13, "example.echo.sleep", {"ms": 31000})
        self.want_error(13, "invalid")

    def test_exact_echo(self):
        # Numbers and strings come back exactly as sent: the echo passes raw JSON.
        a = self.a
        a.initialize()
        params = (
            '{"i":[9223372036854775807,-9223372036854775808,18446744073709551615,9007199254740993],'
            '"f":[0.1,1.7976931348623157e308,5e-324,0.3333333333333333,1E400,-0.0],'
            '"s":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f \u2028\u2029 \U0001F600 \\ud83d\\ude00"}'
        )
        a.send('{"type":"request","v":1,"id":2,"method":"example.echo.echo","params":%s}' % params)
        # Compare the raw frame text: read it ourselves.
        m = a.recv()
        self.assertEqual(m["type"], "result")
        self.assertEqual(json.dumps(m["value"]), json.dumps(json.loads(params)))

    def test_fail_and_big(self):
        a = self.a
        a.initialize()
        a.request(2, "example.echo.fail", {"code": "denied", "message": "not for you"})
        self.assertEqual(self.want_error(2, "denied")["message"], "not for you")
        a.request(3, "example.echo.fail", {"code": "Busy", "message": "x"})  # R28: unknown -> failed
        self.want_error(3, "failed")
        long = "é" * 3000  # 6000 bytes: capped at 4096 on a character boundary (R30)
        a.request(4, "example.echo.fail", {"code": "failed", "message": long})
        msg = self.want_error(4, "failed")["message"]
        self.assertEqual(msg, "é" * 2048)
        a.request(5, "example.echo.big", {"bytes": 1 << 20})
        m = a.recv()
        self.assertEqual(len(m["value"]), 1 << 20)
        a.request(6, "example.echo.big", {"bytes": 4 << 20})
        self.want_error(6, "invalid")

    def test_busy_and_cancel(self):
        # R40: 32 in flight, the 33rd busy at once; R38: cancelled, each answers aborted.
        a = self.a
        a.initialize()
        for i in range(32):
            a.request(100 + i, "example.echo.sleep", {"ms": 30000})
        a.request(132, "example.echo.sleep", {"ms": 30000})
        self.assertEqual(self.want_error(132, "busy")["message"], "Too many requests in flight")
        for i in range(32):
            a.cancel(100 + i)
        seen = set()
        for _ in range(32):
            m = a.recv()
            self.assertEqual((m["type"], m["code"], m["message"]), ("error", "aborted", "Sleep canceled"))
            self.assertNotIn(m["id"], seen)  # R16: exactly one reply each
            seen.add(m["id"])
        self.assertEqual(seen, set(range(100, 132)))
        # Slots are free again.
        a.request(200, "example.echo.sleep", {"ms": 1})
        self.assertEqual(a.recv()["value"], {"ms": 1})

    def test_eof_cancels_and_exits(self):
        # R49: at the end of stdin every handler is cancelled and the process exits at once.
        a = self.a
        a.initialize()
        for i in range(5):
            a.request(2 + i, "example.echo.sleep", {"ms": 30000})
        a.request(7, "example.echo.echo")
        a.recv()  # the sleeps are running by now
        a.close_stdin()
        code, took = a.wait_exit()
        self.assertEqual(code, 0)
        self.assertLess(took, 2.0)
        ids = set()
        while True:
            m = a.frames.get(timeout=WAIT)
            if m is None:
                break
            self.assertEqual(m["code"], "aborted")
            ids.add(m["id"])
        self.assertEqual(ids, {2, 3, 4, 5, 6})


class HostViolations(unittest.TestCase):
    """A28, A14, R4, R5: faults that cannot be tied to a request end the connection."""

    @staticmethod
    def framed(text):
        b = text.encode()
        return len(b).to_bytes(4, "big") + b

    CASES = {
        "zero-length frame": b"\0\0\0\0",
        "oversized length": b"\x00\x40\x00\x01",
        "not JSON": '{"type":',
        "a result from the host": '{"type":"result","v":1,"id":2,"value":1}',
        "a request without id": '{"type":"request","v":1,"method":"a.b","params":{}}',
        "id 2.0": '{"type":"request","v":1,"id":2.0,"method":"a.b","params":{}}',
        "id not increasing": '{"type":"request","v":1,"id":1,"method":"a.b","params":{}}',
        "text on stdin": b"hello there\n",
    }

    def test_violations(self):
        for name, data in self.CASES.items():
            with self.subTest(name):
                a = Adapter(ECHO)
                self.addCleanup(a.kill)
                self.assertEqual(a.initialize()["type"], "result")
                a.send_raw(data if isinstance(data, bytes) else self.framed(data))
                code, _ = a.wait_exit()
                self.assertEqual(code, 1)
                self.assertTrue(a.no_frame(0.1))
                a.kill()
                if name == "text on stdin":
                    self.assertIn(b"reads as text", a.stderr)


class FixtureBehaviour(unittest.TestCase):
    def start(self, **env):
        a = Adapter(FIXTURE, env=env)
        self.addCleanup(a.kill)
        return a

    def test_configuration(self):
        a = self.start()
        m = a.initialize(configuration={"greeting": "hi"})
        self.assertEqual(m["type"], "result", m)
        a.request(2, "test.fixture.greet", {"name": "bob", "times": 2, "tags": ["x"]})
        self.assertEqual(a.recv()["value"], {"text": "hi, bob hi, bob", "tags": ["x"]})
        # A38: a member left out is its zero value, as in Go.
        a.request(3, "test.fixture.greet", {"times": 2})
        self.assertEqual(a.recv()["value"], {"text": "hi,  hi, ", "tags": None})
        a.request(4, "test.fixture.greet", {"name": "x", "tags": [1]})
        self.assertIn('field "tags[0]": expected a string', a.recv()["message"])

    def test_bad_configuration_and_refusal(self):
        a = self.start()
        m = a.initialize(configuration={"greting": "typo"})
        self.assertEqual((m["type"], m["code"]), ("error", "invalid"), m)
        self.assertIn('"greting"', m["message"])
        a.request(2, "test.fixture.greet", {"name": "x"})  # R27: initialize failed
        self.assertEqual(a.recv()["code"], "invalid")
        b = self.start()
        m = b.initialize(configuration={"refuse": True})
        self.assertEqual((m["code"], m["message"]), ("denied", "refused by configuration"))
        c = self.start()
        c.request(1, "system.adapter.initialize", {"protocol": 2, "configuration": {}})
        self.assertEqual(c.recv()["code"], "invalid")

    def test_plain_handlers_and_cancel(self):
        a = self.start()
        a.initialize()
        a.request(2, "test.fixture.block")
        a.request(3, "test.fixture.greet", {"name": "x"})  # runs while block waits
        self.assertEqual(a.recv()["id"], 3)
        a.cancel(2)
        m = a.recv()
        self.assertEqual((m["id"], m["code"], m["message"]), (2, "aborted", "Block canceled by the host"))

    def test_cancelled_handler_keeps_its_slot(self):
        # R38, A16: a cancelled plain handler keeps its slot until it returns.
        a = self.start()
        a.initialize()
        for i in range(32):
            a.request(10 + i, "test.fixture.stubborn", {"seconds": 1.0})
        for i in range(32):
            a.cancel(10 + i)
        a.request(42, "test.fixture.greet", {"name": "x"})
        m = a.recv()
        self.assertEqual((m["id"], m["code"]), (42, "busy"), m)
        replies = [a.recv() for _ in range(32)]
        self.assertTrue(all(r["type"] == "result" and r["value"] == {"cancelled": True} for r in replies))

    def test_errors(self):
        a = self.start()
        a.initialize()
        a.request(2, "test.fixture.crash")
        m = a.recv()
        self.assertEqual((m["code"], m["message"]), ("failed", "RuntimeError: boom"))
        a.request(3, "test.fixture.nan")
        m = a.recv()
        self.assertEqual(m["code"], "failed")
        self.assertIn("not JSON", m["message"])
        a.request(4, "test.fixture.greet", {"name": "still alive"})
        self.assertEqual(a.recv()["type"], "result")

    def test_stray_output_and_logs(self):
        # R6: print(), a raw write to fd 1 and a child's output all go to stderr.
        a = self.start()
        a.initialize()
        a.request(2, "test.fixture.print")
        self.assertEqual(a.recv()["value"], {"printed": True})
        a.request(3, "test.fixture.log")
        self.assertEqual(a.recv()["type"], "result")
        a.close_stdin()
        self.assertEqual(a.wait_exit()[0], 0)
        a.kill()
        err = a.stderr.decode()
        for s in ("stray print", "stray fd write", "stray child output"):
            self.assertIn(s, err)
        line = next(l for l in err.splitlines() if '"logged"' in l)
        rec = json.loads(line)
        self.assertEqual((rec["@level"], rec["@message"], rec["@module"], rec["n"]), ("info", "logged", "fixture_adapter", 1))
        self.assertIn("@timestamp", rec)

    def test_eof_with_a_stubborn_thread(self):
        # R49: a plain handler that never returns does not hold the process past 2 s.
        a = self.start()
        a.initialize()
        a.request(2, "test.fixture.stubborn", {"seconds": 60})
        a.request(3, "test.fixture.greet", {"name": "x"})
        a.recv()
        a.close_stdin()
        code, took = a.wait_exit()
        self.assertEqual(code, 0)
        self.assertLess(took, 2.0)


class Terminal(unittest.TestCase):
    def test_friendly_message(self):
        master, slave = pty.openpty()
        try:
            env = dict(os.environ, PYTHONPATH=ROOT)
            p = subprocess.run(
                [sys.executable, ECHO], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=WAIT
            )
        finally:
            os.close(master)
            os.close(slave)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, b"")
        self.assertIn(b"adapterctl check", p.stderr)


if __name__ == "__main__":
    unittest.main()
