// The shared value vectors (testdata/conformance/values.json at the repository's root,
// docs/protocol.md A38-A44), run against this SDK: each type of the file declared with
// `t`, each input decoded as params are, and the value written back as results are.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { stringifyJSON, t, type Schema } from "../src/index.js";
import { parseRaw } from "../src/json.js";
import { DIST, exact } from "./harness.js";

interface Vectors {
  types: Record<string, Array<[string, string]>>;
  cases: Array<{ rule: string; name: string; type: string; input: string; output?: string; error?: string; error_prefix?: string }>;
  encode: Array<{ rule: string; name: string; f64: string }>;
}

const doc = JSON.parse(readFileSync(join(DIST, "..", "..", "..", "testdata", "conformance", "values.json"), "utf8")) as Vectors;

const scalars: Record<string, () => Schema<unknown>> = {
  string: t.string,
  bool: t.boolean,
  int8: t.int8,
  int16: t.int16,
  int32: t.int32,
  int64: t.int64,
  uint8: t.uint8,
  uint16: t.uint16,
  uint32: t.uint32,
  uint64: t.uint64,
  float32: t.float32,
  float64: t.float64,
  "time.Time": t.time,
  any: t.any,
};

/** The schema of a Go type as the vectors write it: what Go makes nil is nullable. */
function schemaOf(ty: string): Schema<unknown> {
  if (ty in scalars) {
    return scalars[ty]();
  }
  if (ty === "[]byte") {
    return t.bytes().nullable();
  }
  if (ty.startsWith("*")) {
    return schemaOf(ty.slice(1)).nullable();
  }
  if (ty.startsWith("[]")) {
    return t.array(schemaOf(ty.slice(2))).nullable();
  }
  if (ty.startsWith("map[string]")) {
    return t.record(schemaOf(ty.slice("map[string]".length))).nullable();
  }
  const members = doc.types[ty];
  assert.ok(members, `no type ${ty}`);
  return t.object(Object.fromEntries(members.map(([name, m]) => [name, schemaOf(m)])));
}

test("value vectors (testdata/conformance/values.json)", async (tt) => {
  assert.ok(doc.cases.length > 0);
  for (const c of doc.cases) {
    await tt.test(`${c.rule} ${c.name}`, () => {
      const s = schemaOf(c.type);
      if (c.output !== undefined) {
        const out = stringifyJSON(s.parseText(c.input));
        assert.deepEqual(exact(parseRaw(out)), exact(parseRaw(c.output)), `${c.input}\n got ${out}\nwant ${c.output}`);
        return;
      }
      assert.throws(
        () => s.parseText(c.input),
        (e: Error) => (c.error !== undefined ? e.message === c.error : e.message.startsWith(c.error_prefix ?? "")),
        `${c.input}: want ${c.error ?? c.error_prefix}`,
      );
    });
  }
  const specials: Record<string, number> = { NaN: NaN, "+Inf": Infinity, "-Inf": -Infinity };
  for (const c of doc.encode) {
    await tt.test(`${c.rule} ${c.name}`, () => {
      assert.ok(c.f64 in specials, c.f64);
      assert.throws(() => stringifyJSON({ f32: 0, f64: specials[c.f64] }), TypeError);
    });
  }
});
