import assert from "node:assert/strict";
import { test } from "node:test";

import { CallError, implement, lazy, Logger, method, RawJSON, Service, t, type RequestContext, type Schema } from "../src/index.js";

// A type that contains itself, declared as contract gen writes it.
interface Node {
  n: number;
  kids: Node[] | null;
}
const Node: Schema<Node> = t.object({
  n: t.int8().default(0),
  kids: t.array(lazy(() => Node, "an object")).nullable(),
});
interface Small {
  n: number;
}
const Small: Schema<Small> = t.object({ n: t.int8().default(0) });

const ctx: RequestContext = { id: 1, method: "example.c.echo", signal: new AbortController().signal, logger: new Logger() };

async function call(svc: Service, name: string, params: string): Promise<unknown> {
  const h = svc.handlers.get(name);
  assert.ok(h?.schema);
  return h.handler(h.schema.parseText(params), ctx);
}

test("implement: params decoded by the descriptor's schema, the result checked and sent as text", async () => {
  const svc = new Service("example.c", 1);
  implement(svc, method("example.c.echo", Node, Node), (p) => p);
  const r = await call(svc, "example.c.echo", '{"kids":[{"n":-128}]}');
  assert.ok(r instanceof RawJSON);
  assert.equal(r.text, '{"n":0,"kids":[{"n":-128,"kids":null}]}');
  assert.throws(() => Node.parseText('{"kids":[{"n":128}]}'), /field "kids\[0\].n": 128 does not fit int8/);
  assert.throws(() => Node.parseText('{"kids":[1]}'), /field "kids\[0\]": expected an object, got the number 1/);
});

test("implement: a result that does not fit the contract answers failed, naming the member", async () => {
  const svc = new Service("example.c", 1);
  implement(svc, method("example.c.shrink", Node, Small), (p) => p as unknown as Small);
  await assert.rejects(call(svc, "example.c.shrink", '{"n":1}'), (e: unknown) => {
    assert.ok(e instanceof CallError);
    assert.equal(e.code, "failed");
    assert.match(e.message, /^result does not fit the contract: field "kids" is not known/);
    return true;
  });
});
