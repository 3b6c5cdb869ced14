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
 *   less 1 KiB.
 *
 * With ADAPTERKIT_ECHO_STRAY_STDOUT=1 in its environment, example.echo.echo also prints
 * to stdout (console.log, process.stdout and a raw write to fd 1): tests use it to show
 * that stray output cannot reach the protocol stream.
 */
import { writeSync } from "node:fs";
import { setTimeout as sleepFor } from "node:timers/promises";

import { Adapter, CallError, MAX_FRAME, RawJSON, run, Service } from "../src/index.js";

const MAX_SLEEP_MS = 30000;
const MAX_BIG = MAX_FRAME - 1024;
const STRAY = process.env.ADAPTERKIT_ECHO_STRAY_STDOUT === "1";

/** Reads an integer field of params (absent: 0), or answers invalid. */
function intField(p: Record<string, unknown>, name: string): number {
  for (const k of Object.keys(p)) {
    if (k !== name) {
      throw new Error(`field "${k}": unknown field`);
    }
  }
  const v = p[name] ?? 0;
  if (typeof v !== "number" || !Number.isInteger(v)) {
    throw new Error(`field "${name}": expected an integer`);
  }
  return v;
}

function stringField(v: unknown, name: string): string {
  if (v === undefined) {
    return "";
  }
  if (typeof v !== "string") {
    throw new Error(`field "${name}": expected a string`);
  }
  return v;
}

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
  async (p: { ms: number }, ctx) => {
    if (p.ms < 0 || p.ms > MAX_SLEEP_MS) {
      throw new CallError("invalid", `ms must be from 0 to ${MAX_SLEEP_MS}`);
    }
    try {
      await sleepFor(p.ms, undefined, { signal: ctx.signal });
    } catch {
      throw new CallError("aborted", "Sleep canceled");
    }
    return p;
  },
  { params: (v) => ({ ms: intField(v, "ms") }) },
);

svc.method(
  "example.echo.fail",
  (p: { code: string; message: string }) => {
    throw new CallError(p.code, p.message);
  },
  {
    params: (v) => {
      for (const k of Object.keys(v)) {
        if (k !== "code" && k !== "message") {
          throw new Error(`field "${k}": unknown field`);
        }
      }
      return { code: stringField(v.code, "code"), message: stringField(v.message, "message") };
    },
  },
);

svc.method(
  "example.echo.big",
  (p: { bytes: number }) => {
    if (p.bytes < 0 || p.bytes > MAX_BIG) {
      throw new CallError("invalid", `bytes must be from 0 to ${MAX_BIG}`);
    }
    return new RawJSON('"' + "x".repeat(p.bytes) + '"');
  },
  { params: (v) => ({ bytes: intField(v, "bytes") }) },
);

run(new Adapter({ services: [svc] }));
