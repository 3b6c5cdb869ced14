// The shared conformance vectors (testdata/conformance at the repository's root), run
// against this SDK: the frames the echo adapter must answer word for word as the Go echo
// does, and the catalogs its validation must accept or refuse by rule.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { validateCatalog, type CatalogService } from "../src/index.js";
import { JSONNumber, parseRaw, RawObject, type Raw } from "../src/json.js";
import { DIST, ECHO, exact, TestAdapter, type Envelope } from "./harness.js";

const VECTORS = join(DIST, "..", "..", "..", "testdata", "conformance");

interface Expect {
  id: number;
  type: string;
  code?: string;
  message?: string;
  value?: string;
}

function load<C>(name: string): C[] {
  const doc = JSON.parse(readFileSync(join(VECTORS, name), "utf8")) as { cases: C[] };
  assert.ok(doc.cases.length > 0, `${name} has no cases`);
  return doc.cases;
}

test("echo frames (testdata/conformance/echo.json)", async (t) => {
  const cases = load<{ name: string; initialize?: boolean; send: string[]; expect: Expect[] }>("echo.json");
  for (const c of cases) {
    await t.test(c.name, async () => {
      const a = new TestAdapter(ECHO);
      a.parse = (text) => {
        const raw = parseRaw(text) as RawObject;
        const env: Envelope = {};
        for (const [k, x] of raw.entries) {
          env[k] = k === "value" ? x : x instanceof JSONNumber ? Number(x.text) : x;
        }
        return env;
      };
      try {
        if (c.initialize !== false) {
          assert.equal((await a.initialize(1)).type, "result");
        }
        for (const f of c.send) {
          a.send(f);
        }
        const got = new Map<number, Envelope>();
        for (let i = 0; i < c.expect.length; i++) {
          const m = await a.recv();
          got.set(m.id, m);
        }
        for (const want of c.expect) {
          const m = got.get(want.id);
          assert.ok(m, `no reply to id ${want.id}`);
          assert.deepEqual([m.type, m.code], [want.type, want.code], JSON.stringify(m));
          if (want.message !== undefined) {
            assert.equal(m.message, want.message);
          }
          if (want.value !== undefined) {
            assert.deepEqual(exact(m.value as Raw), exact(parseRaw(want.value)));
          }
        }
        a.closeStdin();
        await a.exited;
      } finally {
        a.kill();
      }
    });
  }
});

test("catalogs (testdata/conformance/catalogs.json)", () => {
  for (const c of load<{ name: string; services: CatalogService[]; rule: string | null }>("catalogs.json")) {
    const problem = validateCatalog(c.services);
    if (c.rule === null) {
      assert.equal(problem, undefined, c.name);
    } else {
      assert.ok(problem?.includes(`(${c.rule})`), `${c.name}: ${problem}`);
    }
  }
});
