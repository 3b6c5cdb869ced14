// The adapter of the stream recipe's tests (streams.ts), service test.streams version 1,
// the same in every SDK and in the Go end-to-end test of streams (e2e/sdk_streams_test.go):
//
// - test.streams.put (an upload) reads the stream and keeps it under its name; it
//   returns {"bytes", "sha256"}. fail_after N fails (code failed) once N bytes were
//   read; stall stops reading after the first read until the stream is given up.
// - test.streams.get (a download) writes the stream kept under name; unknown, it fails
//   with invalid. fail_after N fails (code failed) after writing N bytes; hold writes
//   nothing until the stream is given up.
// - test.streams.stats returns {"uploads", "downloads"} (the streams under way) and
//   "aborted" (the handlers that saw their stream given up), once "aborted" is at least
//   its param wait_aborted (waiting at most 10 s: a handler may see the end of its
//   stream after the reply that ended it).
import { createHash } from "node:crypto";

import { Adapter, CallError, run, Service, t } from "../src/index.js";
import { Download, Upload } from "./streams.js";

const blobs = new Map<string, Buffer>();
let aborted = 0;
let abortWaiters: Array<() => void> = [];

/** Waits until signal is aborted, and throws its reason. */
function givenUp(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const stop = () => {
      aborted++;
      abortWaiters.forEach((w) => w());
      abortWaiters = [];
      reject(signal.reason);
    };
    if (signal.aborted) {
      stop();
    } else {
      signal.addEventListener("abort", stop, { once: true });
    }
  });
}

const put = new Upload(
  t.object({ name: t.string(), fail_after: t.int64(), stall: t.boolean() }),
  async (p, reader, signal) => {
    const h = createHash("sha256");
    const parts: Uint8Array[] = [];
    let n = 0;
    for (;;) {
      const b = await reader.read(64 << 10);
      h.update(b);
      parts.push(b);
      n += b.length;
      if (Number(p.fail_after) > 0 && n >= Number(p.fail_after)) {
        throw new CallError("failed", `failing after ${n} bytes as asked`);
      }
      if (p.stall) {
        await givenUp(signal);
      }
      if (b.length === 0) {
        blobs.set(p.name, Buffer.concat(parts));
        return { bytes: n, sha256: h.digest("hex") };
      }
    }
  },
);

const get = new Download(t.object({ name: t.string(), fail_after: t.int64(), hold: t.boolean() }), async (p, writer, signal) => {
  if (p.hold) {
    await givenUp(signal);
  }
  const blob = blobs.get(p.name);
  if (blob === undefined) {
    throw new CallError("invalid", `no blob "${p.name}"`);
  }
  const end = Number(p.fail_after) > 0 ? Math.min(blob.length, Number(p.fail_after)) : blob.length;
  for (let off = 0; off < end; off += 256 << 10) {
    await writer.write(blob.subarray(off, Math.min(end, off + (256 << 10))));
  }
  if (end < blob.length) {
    throw new CallError("failed", `failing after ${end} bytes as asked`);
  }
});

const svc = new Service("test.streams", 1);
put.register(svc, "test.streams.put");
get.register(svc, "test.streams.get");
svc.method(
  "test.streams.stats",
  async (p) => {
    const until = Date.now() + 10_000;
    while (aborted < Number(p.wait_aborted) && Date.now() < until) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, until - Date.now());
        abortWaiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return { uploads: put.size, downloads: get.size, aborted };
  },
  { params: t.object({ wait_aborted: t.int64() }) },
);

run(new Adapter({ services: [svc] }));
