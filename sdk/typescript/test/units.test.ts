import assert from "node:assert/strict";
import { test } from "node:test";

import { capMessage, JSONNumber, Logger, normalizeCode, ParamsError, parseJSON, stringifyJSON, t } from "../src/index.js";
import { errorFrame, FrameReader, isIdLiteral, memberSpans } from "../src/wire.js";

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

test("parseJSON keeps integers beyond 2^53 exact; stringifyJSON writes them as digits", () => {
  const text = '{"i":9223372036854775807,"u":18446744073709551615,"p":9007199254740993,"s":9007199254740991,"f":[0.1,1e21,-0.5],"n":null}';
  const v = parseJSON(text) as Record<string, unknown>;
  assert.deepEqual([v.i, v.u, v.p, v.s], [9223372036854775807n, 18446744073709551615n, 9007199254740993n, 9007199254740991]);
  assert.equal(stringifyJSON(v), '{"i":9223372036854775807,"u":18446744073709551615,"p":9007199254740993,"s":9007199254740991,"f":[0.1,1e+21,-0.5],"n":null}');
  assert.deepEqual(Object.keys(parseJSON('{"__proto__":1}') as object), ["__proto__"]);
  assert.equal(stringifyJSON({ b: new Uint8Array([0, 1, 0xfe, 0xff]), n: new JSONNumber("1.50"), u: undefined, a: [undefined] }), '{"b":"AAH+/w==","n":1.50,"a":[null]}');
  assert.throws(() => stringifyJSON({ x: Infinity }), /not a JSON number/);
  for (const bad of ["", "{", "[1,]", '{"a" 1}', "01", "1.", '"\u0001"', '"\\x"', "nul", "1 2"]) {
    assert.throws(() => parseJSON(bad), SyntaxError, bad);
  }
  assert.throws(() => new JSONNumber("1e"), SyntaxError);
});

test("params schema: the inferred type, and what a member left out becomes", () => {
  const P = t.object({
    name: t.string(),
    seq: t.int64().default(0),
    note: t.string().optional(),
    tags: t.record(t.uint8()).nullable(),
    blob: t.bytes().default(() => new Uint8Array()),
  });
  // The type checker sees the schema's type: a required string, an optional note.
  const p: { name: string; seq: number | bigint; note?: string; tags: Record<string, number> | null; blob: Uint8Array } = P.parseText(
    '{"name":"n","note":null,"seq":9223372036854775807}',
  );
  assert.deepEqual(p, { name: "n", seq: 9223372036854775807n, tags: null, blob: new Uint8Array() });
  assert.deepEqual(P.parse({ name: "x", tags: { a: 255 } }).tags, { a: 255 });
  // A member left out, or null, without a default is its zero value, as in Go (A38, A39).
  assert.deepEqual(P.parseText("{}"), { name: "", seq: 0, tags: null, blob: new Uint8Array() });
  assert.deepEqual(P.parseText('{"name":null}'), { name: "", seq: 0, tags: null, blob: new Uint8Array() });
  const Z = t.object({ s: t.string(), i: t.uint64(), b: t.boolean(), x: t.bytes(), a: t.array(t.int8()), r: t.record(t.string()), o: t.object({ f: t.float32() }), at: t.time() });
  assert.equal(stringifyJSON(Z.parseText('{"a":[null,1],"r":{"k":null}}')), '{"s":"","i":0,"b":false,"x":"","a":[0,1],"r":{"k":""},"o":{"f":0},"at":"0001-01-01T00:00:00Z"}');
  assert.throws(() => P.parseText('{"name":1}'), (e: Error) => e instanceof ParamsError && e.message === 'field "name": expected a string, got the number 1');
  assert.deepEqual(t.any().parseText('{"a":[1,9007199254740993]}'), { a: [1, 9007199254740993n] });
});

test("parseJSON accepts and refuses what JSON.parse does, with the same values (differential)", () => {
  // A seeded generator of texts near valid JSON: valid ones, then random edits of them.
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return (seed >>> 16) % n; // the high bits: the low ones of this generator cycle fast
  };
  const corpus = ['{"a":[1,-0.5e-3,9007199254740993,"x\\n\\u00e9",true,false,null],"b":{}}', "[]", '"s"', "0", '{"__proto__":{"x":1},"a":1,"a":2}', "[[[[1]]]]"];
  const alphabet = '{}[]",:0123456789.eE+- \t\ntrufalsn\\/ab';
  const plain = (v: unknown): unknown => (typeof v === "bigint" ? Number(v) : Array.isArray(v) ? v.map(plain) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)])) : v);
  let accepted = 0;
  for (let i = 0; i < 20000; i++) {
    let s = corpus[rnd(corpus.length)];
    for (let e = rnd(4); e > 0; e--) {
      const at = rnd(s.length + 1);
      const c = alphabet[rnd(alphabet.length)];
      s = [s.slice(0, at) + c + s.slice(at), s.slice(0, at) + s.slice(at + 1), s.slice(0, at) + c + s.slice(at + 1)][rnd(3)];
    }
    let want: unknown;
    let wantErr = false;
    try {
      want = JSON.parse(s);
    } catch {
      wantErr = true;
    }
    let got: unknown;
    let gotErr = false;
    try {
      got = parseJSON(s);
    } catch (e) {
      assert.ok(e instanceof SyntaxError, String(e));
      gotErr = true;
    }
    assert.equal(gotErr, wantErr, JSON.stringify(s));
    if (!wantErr) {
      accepted++;
      assert.deepEqual(plain(got), want, JSON.stringify(s));
    }
  }
  assert.ok(accepted > 1000, `only ${accepted} valid texts`);
});

test("the writer writes every frame in order to a file, and reports a failed write once", async () => {
  const { closeSync, mkdtempSync, openSync, readFileSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { Writer } = await import("../src/writer.js");
  const dir = mkdtempSync(join(tmpdir(), "adapterkit-writer-"));
  try {
    const path = join(dir, "frames");
    const fd = openSync(path, "w");
    const errors: Error[] = [];
    const w = new Writer(fd, (e) => errors.push(e));
    w.put(Buffer.from("one,"));
    w.put(Buffer.from("two,")); // the same turn: one write with the first
    await new Promise((r) => setImmediate(r));
    w.put(Buffer.from("three"));
    await w.idle();
    closeSync(fd);
    assert.equal(readFileSync(path, "utf8"), "one,two,three");
    assert.equal(errors.length, 0);

    const ro = openSync(path, "r"); // writing to it fails (EBADF)
    const bad = new Writer(ro, (e) => errors.push(e));
    bad.put(Buffer.from("x"));
    bad.put(Buffer.from("y"));
    await bad.idle();
    bad.put(Buffer.from("z")); // after a failure: dropped, not written, not reported again
    await bad.idle();
    closeSync(ro);
    assert.equal(errors.length, 1);
    assert.equal(readFileSync(path, "utf8"), "one,two,three");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
