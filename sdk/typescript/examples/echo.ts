/**
 * tsecho: the echo test adapter of adapterkit written with the TypeScript SDK.
 *
 * Service example.echo version 1, exactly as the Go examples/echo:
 *
 * - example.echo.echo returns its params unchanged (as raw JSON, without decoding);
 * - example.echo.sleep {"ms": 0..30000} returns {"ms": N} after N ms; a cancel ends the
 *   wait early with aborted "Sleep canceled";
 * - example.echo.fail {"code", "message"} answers that error (an unknown code is sent
 *   as failed, the message capped at 4096 bytes);
 * - example.echo.big {"bytes": N} returns a string of N 'x', N at most the frame limit
 *   less 1 KiB;
 * - example.echo.record, example.echo.blob and example.echo.exact check their params
 *   against a schema and return them, encoded again: the typed path, for tests of
 *   exactness (every integer size, int64 and uint64 beyond 2^53 as bigint, floats, a
 *   number's literal, base64 bytes, nested and nullable objects, maps, arrays).
 *
 * With ADAPTERKIT_ECHO_STRAY_STDOUT=1 in its environment, example.echo.echo also prints
 * to stdout (console.log, process.stdout and a raw write to fd 1): tests use it to show
 * that stray output cannot reach the protocol stream.
 */
import { writeSync } from "node:fs";
import { setTimeout as sleepFor } from "node:timers/promises";

import { Adapter, CallError, JSONNumber, MAX_FRAME, RawJSON, run, Service, t } from "../src/index.js";

const MAX_SLEEP_MS = 30000;
const MAX_BIG = MAX_FRAME - 1024;
const STRAY = process.env.ADAPTERKIT_ECHO_STRAY_STDOUT === "1";

const Sleep = t.object({ ms: t.int64().default(0) });
const Fail = t.object({ code: t.string().default(""), message: t.string().default("") });
const Big = t.object({ bytes: t.int64().default(0) });
const Record = t.object({
  probe: t.string().default(""),
  seq: t.int64().default(0),
  unit: t.string().default(""),
  pad: t.string().default(""),
});
const Blob = t.object({ s: t.string().default("") });
const innerShape = {
  name: t.string().default(""),
  count: t.uint64().default(0),
  tags: t.record(t.int64()).nullable(),
};
const Inner = t.object(innerShape);
// The Go Exact embeds Inner: its fields are the object's own.
const Exact = t.object({
  ...innerShape,
  i64_max: t.int64().default(0),
  i64_min: t.int64().default(0),
  u64_max: t.uint64().default(0),
  i32_min: t.int32().default(0),
  u32_max: t.uint32().default(0),
  i8_min: t.int8().default(0),
  u16_max: t.uint16().default(0),
  beyond: t.int64().default(0),
  int: t.int64().default(0),
  tenth: t.float64().default(0),
  max: t.float64().default(0),
  tiny: t.float64().default(0),
  third: t.float64().default(0),
  f32: t.float32().default(0),
  number: t.jsonNumber().default(() => new JSONNumber("0")),
  escapes: t.string().default(""),
  seps: t.string().default(""),
  astral: t.string().default(""),
  bytes: t.bytes().nullable(),
  any: t.any(),
  ptr: Inner.nullable(),
  ptr_ptr: t.int64().nullable(),
  nil: Inner.nullable(),
  map: t.record(Inner).nullable(),
  slice: t.array(Inner).nullable(),
  matrix: t.array(t.array(t.uint64())).nullable(),
  empty: t.array(t.string()).nullable(),
});

/** The typed methods return their params: decoded by the schema, encoded again. */
const same = <T>(p: T): T => p;

const svc = new Service("example.echo", 1);

svc.method(
  "example.echo.echo",
  (params: RawJSON) => {
    if (STRAY) {
      console.log("a stray console.log on stdout");
      process.stdout.write("a stray process.stdout.write\n");
      writeSync(1, "a stray write to fd 1\n");
    }
    return params;
  },
  { raw: true },
);

svc.method(
  "example.echo.sleep",
  async (p, ctx) => {
    if (p.ms < 0 || p.ms > MAX_SLEEP_MS) {
      throw new CallError("invalid", `ms must be from 0 to ${MAX_SLEEP_MS}`);
    }
    try {
      await sleepFor(Number(p.ms), undefined, { signal: ctx.signal });
    } catch {
      throw new CallError("aborted", "Sleep canceled");
    }
    return p;
  },
  { params: Sleep },
);

svc.method(
  "example.echo.fail",
  (p) => {
    throw new CallError(p.code, p.message);
  },
  { params: Fail },
);

svc.method(
  "example.echo.big",
  (p) => {
    if (p.bytes < 0 || p.bytes > MAX_BIG) {
      throw new CallError("invalid", `bytes must be from 0 to ${MAX_BIG}`);
    }
    return new RawJSON('"' + "x".repeat(Number(p.bytes)) + '"');
  },
  { params: Big },
);

svc.method("example.echo.record", same, { params: Record });
svc.method("example.echo.blob", same, { params: Blob });
svc.method("example.echo.exact", same, { params: Exact });

run(new Adapter({ services: [svc] }));
