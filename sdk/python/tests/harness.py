"""A host for tests: starts an adapter script and speaks frames to it."""

import json
import os
import queue
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WAIT = 30.0  # bounds every wait so that a broken test fails instead of hanging


class Adapter:
    """An adapter process on pipes, driven frame by frame."""

    def __init__(self, script, env=None, stdin=subprocess.PIPE, parse=json.loads):
        self.parse = parse  # how a frame's payload text becomes the value recv returns
        e = dict(os.environ)
        e["PYTHONPATH"] = ROOT
        e.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, script], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e
        )
        self.frames = queue.Queue()
        self.out_error = None
        self.stderr = b""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            head = out.read(4)
            if not head:
                break
            if len(head) < 4:
                self.out_error = "truncated header"
                break
            n = int.from_bytes(head, "big")
            body = out.read(n)
            if len(body) < n:
                self.out_error = "truncated body"
                break
            try:
                self.frames.put(self.parse(body.decode("utf-8")))
            except ValueError as e:
                self.out_error = "bad payload %r: %s" % (body[:80], e)
                break
        self.frames.put(None)

    def _read_err(self):
        self.stderr = self.proc.stderr.read()

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, envelope):
        payload = (envelope if isinstance(envelope, str) else json.dumps(envelope)).encode("utf-8")
        self.send_raw(len(payload).to_bytes(4, "big") + payload)

    def request(self, id_, method, params=None):
        self.send({"type": "request", "v": 1, "id": id_, "method": method, "params": {} if params is None else params})

    def cancel(self, id_):
        self.send({"type": "cancel", "v": 1, "id": id_})

    def initialize(self, id_=1, configuration=None):
        self.request(id_, "system.adapter.initialize", {"protocol": 1, "configuration": configuration or {}})
        return self.recv()

    def recv(self, timeout=WAIT):
        m = self.frames.get(timeout=timeout)
        if m is None:
            raise AssertionError("the adapter's output ended: %s" % self.out_error)
        return m

    def no_frame(self, timeout):
        try:
            m = self.frames.get(timeout=timeout)
        except queue.Empty:
            return True
        if m is None:
            self.frames.put(None)
            return True
        raise AssertionError("unexpected frame %r" % (m,))

    def close_stdin(self):
        self.proc.stdin.close()

    def wait_exit(self, timeout=WAIT):
        start = time.monotonic()
        code = self.proc.wait(timeout)
        return code, time.monotonic() - start

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if f:
                    f.close()
            except OSError:
                pass


ECHO = os.path.join(ROOT, "examples", "echo.py")
FIXTURE = os.path.join(ROOT, "tests", "fixture_adapter.py")
