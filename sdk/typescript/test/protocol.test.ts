// The adapter's side of the protocol over real pipes to real processes; each test names
// the rules of docs/protocol.md it checks.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";

import { ECHO, FIXTURE, TestAdapter } from "./harness.js";

function start(t: { after: (f: () => void) => void }, script: string, env?: Record<string, string>, pipe = false): TestAdapter {
  const a = new TestAdapter(script, env, pipe);
  t.after(() => a.kill());
  return a;
}

async function wantError(a: TestAdapter, id: number, code: string): Promise<Record<string, any>> {
  const m = await a.recv();
  assert.deepEqual([m.type, m.id, m.code], ["error", id, code], JSON.stringify(m));
  return m;
}

test("handshake and refusals (R19 R27 A7 R12 R42 R37)", async (t) => {
  const a = start(t, ECHO);
  a.request(1, "example.echo.echo");
  assert.equal((await wantError(a, 1, "invalid")).message, "Adapter is not initialized");
  const init = await a.initialize(2);
  assert.deepEqual(init.value, {
    protocol: 1,
    services: [{ id: "example.echo", version: 1, methods: ["example.echo.echo", "example.echo.sleep", "example.echo.fail", "example.echo.big", "example.echo.record", "example.echo.blob", "example.echo.exact"] }],
  });
  const again = await a.initialize(3);
  assert.deepEqual([again.type, again.code], ["error", "invalid"]);
  a.send('{"type":"request","v":1,"id":4,"method":"example.echo.echo","params":{},"extra":1}');
  await wantError(a, 4, "invalid");
  a.send('{"type":"request","v":1,"id":5,"method":"example.echo.echo"}');
  await wantError(a, 5, "invalid");
  a.send('{"type":"request","v":1.0,"id":6,"method":"example.echo.echo","params":{}}');
  await wantError(a, 6, "invalid");
  a.request(7, "example.echo.nope");
  assert.equal((await wantError(a, 7, "unavailable")).message, "Unknown method");
  a.cancel(99);
  a.send('{"type":"cancel","v":1,"id":8,"extra":true}');
  a.request(8, "example.echo.sleep", { ms: "1" });
  assert.match((await wantError(a, 8, "invalid")).message, /"ms"/);
});

test("exact echo: numbers and strings unchanged", async (t) => {
  const a = start(t, ECHO);
  await a.initialize();
  const params = '{"i":[9223372036854775807,18446744073709551615,9007199254740993],"f":[0.1,5e-324,1E400],"s":"\\u2028\\ud83d\\ude00\\"\\\\"}';
  a.send(`{"type":"request","v":1,"id":2,"method":"example.echo.echo","params":${params}}`);
  const m = await a.recv();
  assert.equal(m.type, "result");
  // The harness decoded with JSON.parse; compare what survives it, and check the
  // digits through the raw frame in the Go e2e tests.
  assert.deepEqual(m.value, JSON.parse(params));
});

test("fail and big (R28 R30)", async (t) => {
  const a = start(t, ECHO);
  await a.initialize();
  a.request(2, "example.echo.fail", { code: "Busy", message: "x" });
  await wantError(a, 2, "failed");
  a.request(3, "example.echo.fail", { code: "denied", message: "é".repeat(3000) });
  assert.equal((await wantError(a, 3, "denied")).message, "é".repeat(2048));
  a.request(4, "example.echo.big", { bytes: 1 << 20 });
  assert.equal((await a.recv()).value.length, 1 << 20);
});

test("busy beyond 32 and cancel (R40 R38 R16)", async (t) => {
  const a = start(t, ECHO);
  await a.initialize();
  for (let i = 0; i < 33; i++) {
    a.request(100 + i, "example.echo.sleep", { ms: 30000 });
  }
  assert.equal((await wantError(a, 132, "busy")).message, "Too many requests in flight");
  for (let i = 0; i < 32; i++) {
    a.cancel(100 + i);
  }
  const seen = new Set<number>();
  for (let i = 0; i < 32; i++) {
    const m = await a.recv();
    assert.deepEqual([m.code, m.message], ["aborted", "Sleep canceled"]);
    assert.ok(!seen.has(m.id));
    seen.add(m.id);
  }
});

test("a cancelled handler keeps its slot until it returns (R38 A16)", async (t) => {
  const a = start(t, FIXTURE);
  await a.initialize();
  for (let i = 0; i < 32; i++) {
    a.request(10 + i, "test.fixture.stubborn", { ms: 1000 });
    a.cancel(10 + i);
  }
  a.request(42, "test.fixture.greet", { name: "x" });
  await wantError(a, 42, "busy");
  for (let i = 0; i < 32; i++) {
    const m = await a.recv();
    assert.deepEqual(m.value, { aborted: true });
  }
});

test("configuration and initialize refusals (R26 A7)", async (t) => {
  const a = start(t, FIXTURE);
  assert.equal((await a.initialize(1, { greeting: "hi" })).type, "result");
  a.request(2, "test.fixture.greet", { name: "bob" });
  assert.deepEqual((await a.recv()).value, { text: "hi, bob" });
  const b = start(t, FIXTURE);
  const m = await b.initialize(1, { greting: "typo" });
  assert.equal(m.code, "invalid");
  assert.equal(m.message, 'Invalid configuration: field "greting" is not known (known: greeting, refuse, limit)');
  b.request(2, "test.fixture.greet", { name: "x" });
  await wantError(b, 2, "invalid");
  const c = start(t, FIXTURE);
  assert.deepEqual(Object.values(await c.initialize(1, { refuse: true })).slice(3), ["denied", "refused by configuration"]);
  // The configuration's integers are exact: a uint64 beyond 2^53 keeps its digits.
  const d = start(t, FIXTURE);
  d.parse = (text) => JSON.parse(text.replace(/"limit":([0-9]+)/, '"limit":"$1"'));
  d.send('{"type":"request","v":1,"id":1,"method":"system.adapter.initialize","params":{"protocol":1,"configuration":{"limit":18446744073709551615}}}');
  assert.equal((await d.recv()).type, "result");
  d.request(2, "test.fixture.config");
  assert.deepEqual((await d.recv()).value, { greeting: "hello", refuse: false, limit: "18446744073709551615" });
});

test("errors: thrown and unencodable results; a bigint result is its digits", async (t) => {
  const a = start(t, FIXTURE);
  a.parse = (text) => JSON.parse(text.replace(/"n":([0-9]+)/, '"n":"$1"'));
  await a.initialize();
  a.request(2, "test.fixture.crash");
  assert.equal((await wantError(a, 2, "failed")).message, "TypeError: boom");
  a.request(3, "test.fixture.nan");
  assert.equal((await wantError(a, 3, "failed")).message, "Result is not JSON: NaN is not a JSON number");
  a.request(4, "test.fixture.bigint");
  assert.deepEqual((await a.recv()).value, { n: "18446744073709551615" });
  // Untyped params: integers JSON.parse would round arrive as bigint, the others as numbers.
  a.send('{"type":"request","v":1,"id":5,"method":"test.fixture.untyped","params":{"a":9007199254740993,"b":1.5,"c":7}}');
  assert.deepEqual((await a.recv()).value, { types: ["bigint", "number", "number"] });
});

test("stray output goes to stderr; logs are hclog JSON (R6)", async (t) => {
  const a = start(t, FIXTURE, {}, true);
  await a.initialize();
  a.request(2, "test.fixture.print");
  assert.deepEqual((await a.recv()).value, { printed: true });
  a.request(3, "test.fixture.log");
  await a.recv();
  a.closeStdin();
  assert.equal(await a.exited, 0);
  for (const s of ["stray console.log", "stray fd write", "stray child output"]) {
    assert.ok(a.stderr.includes(s), s);
  }
  const rec = JSON.parse(a.stderr.split("\n").find((l) => l.includes('"logged"'))!);
  assert.deepEqual(Object.keys(rec).slice(0, 4), ["@level", "@message", "@module", "@timestamp"]);
  assert.deepEqual([rec["@level"], rec["@module"], rec.n], ["info", "fixture", 1]);
});

test("stdin EOF exits within 2 s, whatever the handlers do (R49)", async (t) => {
  const a = start(t, FIXTURE);
  await a.initialize();
  a.request(2, "test.fixture.forever");
  a.request(3, "test.fixture.greet", { name: "x" });
  await a.recv();
  const t0 = Date.now();
  a.closeStdin();
  assert.equal(await a.exited, 0);
  assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
});

test("host violations end the connection (A28 A14 R4 R5)", async (t) => {
  const cases: Record<string, Buffer | string> = {
    "zero-length frame": Buffer.from([0, 0, 0, 0]),
    "oversized length": Buffer.from([0, 0x40, 0, 1]),
    "not JSON": '{"type":',
    "a result from the host": '{"type":"result","v":1,"id":2,"value":1}',
    "id 2.0": '{"type":"request","v":1,"id":2.0,"method":"a.b","params":{}}',
    "id beyond 2^53-1": '{"type":"request","v":1,"id":9007199254740992,"method":"a.b","params":{}}',
    "id not increasing": '{"type":"request","v":1,"id":1,"method":"a.b","params":{}}',
    "text on stdin": Buffer.from("hello there\n"),
  };
  for (const [name, data] of Object.entries(cases)) {
    const a = start(t, ECHO);
    await a.initialize();
    if (typeof data === "string") {
      a.send(data);
    } else {
      a.sendRaw(data);
    }
    assert.equal(await a.exited, 1, name);
    assert.equal(await a.next(), null, name);
    if (name === "text on stdin") {
      assert.match(a.stderr, /reads as text/);
    }
  }
});

test("run by hand in a terminal: a friendly message", () => {
  const r = spawnSync("script", ["-qec", `${process.execPath} ${ECHO}`, "/dev/null"], { input: "", timeout: 30000 });
  if (r.error) {
    return; // no script(1): nothing to check here
  }
  assert.match(r.stdout.toString(), /adapterctl check/);
});
