import assert from "node:assert/strict";
import { test } from "node:test";

import { capMessage, Logger, normalizeCode, validateCatalog } from "../src/index.js";
import { errorFrame, FrameReader, isIdLiteral, memberSpans } from "../src/wire.js";

const svc = (id: string, version: number, methods: string[]) => ({ id, version, methods });

test("catalog rules R20-R25", () => {
  assert.equal(validateCatalog([svc("a.b", 1, ["a.b.c"]), svc("a.c", 2, ["a.c.d.e"])]), undefined);
  assert.equal(validateCatalog([]), undefined);
  const bad: Record<string, ReturnType<typeof svc>[]> = {
    "R20 one segment": [svc("ab", 1, ["ab.c"])],
    "R20 empty segment": [svc("a..b", 1, ["a..b.c"])],
    "R21 system": [svc("system.x", 1, ["system.x.y"])],
    "R21 systemd": [svc("systemd.x", 1, ["systemd.x.y"])],
    "R22 version 0": [svc("a.b", 0, ["a.b.c"])],
    "R22 version 1.5": [svc("a.b", 1.5, ["a.b.c"])],
    "R23 no methods": [svc("a.b", 1, [])],
    "R24 not prefixed": [svc("conf.echo", 1, ["conf.echoX"])],
    "R25 service twice": [svc("a.b", 1, ["a.b.c"]), svc("a.b", 2, ["a.b.d"])],
    "R25 method twice": [svc("a.b", 1, ["a.b.c", "a.b.c"])],
  };
  for (const [name, services] of Object.entries(bad)) {
    assert.notEqual(validateCatalog(services), undefined, name);
  }
});

test("messages capped on a character boundary (R30), codes normalised (R28)", () => {
  assert.equal(capMessage("x".repeat(5000)), "x".repeat(4096));
  assert.equal(capMessage("€".repeat(2000)), "€".repeat(1365));
  assert.equal(capMessage("a\ud800b"), "a\ufffdb");
  assert.equal(normalizeCode("deadline"), "deadline");
  assert.equal(normalizeCode("Deadline"), "failed");
  const f = errorFrame(7, "nope", "m");
  assert.equal(f.readUInt32BE(0), f.length - 4);
  assert.deepEqual(JSON.parse(f.subarray(4).toString()), { type: "error", v: 1, id: 7, code: "failed", message: "m" });
});

test("member spans and id literals (A6)", () => {
  const text = ' { "a" : 1.50 , "b":{"c":["}",2]} ,"d":"x\\"y", "e\\u0041":[] } ';
  const spans = memberSpans(text);
  const got = Object.fromEntries([...spans].map(([k, s]) => [k, text.slice(s.start, s.end)]));
  assert.deepEqual(got, { a: "1.50", b: '{"c":["}",2]}', d: '"x\\"y"', eA: "[]" });
  assert.ok(isIdLiteral("1") && isIdLiteral("9007199254740991"));
  for (const bad of ["0", "1.0", "1e0", "-1", "9007199254740992", "01", '"1"']) {
    assert.ok(!isIdLiteral(bad), bad);
  }
});

test("frame reader splits and refuses bad lengths (R4 R5)", () => {
  const r = new FrameReader();
  const f = Buffer.from([0, 0, 0, 2, 0x7b, 0x7d, 0, 0, 0, 3, 0x5b]);
  assert.deepEqual(r.push(f.subarray(0, 3)), []);
  assert.deepEqual(r.push(f.subarray(3)).map(String), ["{}"]);
  assert.ok(r.partial);
  assert.deepEqual(r.push(Buffer.from("]]")).map(String), ["[]]"]);
  assert.throws(() => new FrameReader().push(Buffer.from([0, 0, 0, 0])), /zero-length/);
  assert.throws(() => new FrameReader().push(Buffer.from([0, 0x40, 0, 1])), /exceeds/);
  assert.throws(() => new FrameReader().push(Buffer.from("hello")), /reads as text/);
});

test("logger writes hclog JSON lines", () => {
  const lines: string[] = [];
  const log = new Logger({ module: "adapter", level: "info", write: (l) => lines.push(l) });
  log.debug("hidden");
  log.named("probe").with({ probe: "inlet" }).warn("slow", { ms: 12, err: new Error("x") });
  assert.equal(lines.length, 1);
  const rec = JSON.parse(lines[0]);
  assert.deepEqual(Object.keys(rec).slice(0, 4), ["@level", "@message", "@module", "@timestamp"]);
  assert.deepEqual([rec["@level"], rec["@message"], rec["@module"], rec.probe, rec.ms, rec.err], ["warn", "slow", "adapter.probe", "inlet", 12, "x"]);
  assert.match(rec["@timestamp"], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$/);
});
