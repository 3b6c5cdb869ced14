"""adapterkit.contract: a handler registered with a method descriptor gets its params
decoded into the contract's type and has its result checked against the result type."""

import asyncio
import dataclasses
import os
import sys
import unittest
from typing import Dict, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import adapterkit  # noqa: E402
from adapterkit import CallError, Int8, RawJSON  # noqa: E402
from adapterkit.contract import Method, implement  # noqa: E402
from adapterkit.wire import _DECODER  # noqa: E402


@dataclasses.dataclass
class Params:
    n: Int8 = Int8(0)
    tags: Optional[Dict[str, int]] = None


@dataclasses.dataclass
class Result:
    n: Int8 = Int8(0)


ECHO: Method[Params, Params] = Method("example.c.echo", Params, Params)
SHRINK: Method[Params, Result] = Method("example.c.shrink", Params, Result)
CTX = adapterkit.RequestContext(1, "example.c.echo", adapterkit.Logger())


def call(svc: adapterkit.Service, name: str, text: str) -> object:
    h = svc.methods[name].handler
    value = h(_DECODER.decode(text), CTX)
    if asyncio.iscoroutine(value):
        value = asyncio.run(value)
    return value


class Implement(unittest.TestCase):
    def test_params_and_result(self) -> None:
        svc = adapterkit.Service("example.c", 1)
        implement(svc, ECHO, lambda p, ctx: p)
        self.assertEqual(call(svc, "example.c.echo", '{"n":-128,"tags":{"a":1}}'), RawJSON('{"n":-128,"tags":{"a":1}}'))
        self.assertEqual(call(svc, "example.c.echo", "{}"), RawJSON('{"n":0,"tags":null}'))

    def test_async_handler(self) -> None:
        svc = adapterkit.Service("example.c", 1)

        async def handler(p: Params, ctx: adapterkit.RequestContext) -> Result:
            return Result(n=p.n)

        implement(svc, SHRINK, handler)
        self.assertEqual(call(svc, "example.c.shrink", '{"n":7}'), RawJSON('{"n":7}'))

    def test_params_refused(self) -> None:
        svc = adapterkit.Service("example.c", 1)
        implement(svc, ECHO, lambda p, ctx: p)
        with self.assertRaises(CallError) as e:
            call(svc, "example.c.echo", '{"n":128}')
        self.assertEqual((e.exception.code, e.exception.message), ("invalid", 'params: field "n": 128 does not fit int8'))

    def test_result_refused(self) -> None:
        svc = adapterkit.Service("example.c", 1)
        implement(svc, SHRINK, lambda p, ctx: p)  # a Params where the contract says Result
        with self.assertRaises(CallError) as e:
            call(svc, "example.c.shrink", '{"n":1}')
        self.assertEqual(e.exception.code, "failed")
        self.assertIn('result does not fit the contract: field "tags" is not known', e.exception.message)


if __name__ == "__main__":
    unittest.main()
