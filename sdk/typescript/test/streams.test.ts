// The stream recipe (streams.ts) in an adapter (streams_adapter.ts) over real pipes: the
// chunks and reads of docs/contracts.md "The chunks on the wire", sent as registry.Upload
// and registry.Download send them, with chunk K+1 of an upload arriving before chunk K.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { test } from "node:test";

import { DIST, TestAdapter, type Envelope } from "./harness.js";
import { chunkBytes } from "./streams.js";

const STREAMS = join(DIST, "test", "streams_adapter.js");
const PUT = "test.streams.put";
const GET = "test.streams.get";

/** The adapter, initialized, with its replies taken by id whatever their order. */
class Host {
  readonly a: TestAdapter;
  private id = 1;
  private replies = new Map<number, Envelope>();

  constructor(t: { after: (f: () => void) => void }) {
    this.a = new TestAdapter(STREAMS);
    t.after(() => this.a.kill());
  }

  /** Sends a request and returns its id. */
  send(method: string, params: unknown): number {
    this.id++;
    this.a.request(this.id, method, params);
    return this.id;
  }

  /** The reply to the request id. */
  async reply(id: number): Promise<Envelope> {
    while (!this.replies.has(id)) {
      const m = await this.a.recv();
      this.replies.set(m.id, m);
    }
    const m = this.replies.get(id)!;
    this.replies.delete(id);
    return m;
  }

  /** Calls method and returns the reply's value; fails on an error reply. */
  async call(method: string, params: unknown): Promise<any> {
    const m = await this.reply(this.send(method, params));
    assert.equal(m.type, "result", JSON.stringify(m));
    return m.value;
  }
}

async function start(t: { after: (f: () => void) => void }): Promise<Host> {
  const h = new Host(t);
  assert.equal((await h.a.initialize()).type, "result");
  return h;
}

/** The chunks registry.Upload sends for blob: size bytes each, params with chunk 0. */
function chunks(stream: string, blob: Buffer, size: number, params: unknown): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (let seq = 0, off = 0; ; seq++, off += size) {
    const c: Record<string, unknown> = { stream, seq, offset: off, data: blob.subarray(off, off + size).toString("base64") };
    if (seq === 0) {
      c.params = params;
    }
    if (off + size >= blob.length) {
      c.eof = true;
      out.push(c);
      return out;
    }
    out.push(c);
  }
}

/** Uploads blob as a host does, two chunks in flight, but the later of each two sent
 * first; stops after the first pair with an error. The replies, by seq. */
async function upload(h: Host, stream: string, blob: Buffer, size: number, params: unknown): Promise<Envelope[]> {
  const cs = chunks(stream, blob, size, params);
  const replies: Envelope[] = [];
  for (let i = 0; i < cs.length; i += 2) {
    const pair = cs.slice(i, i + 2);
    const sent = pair.reverse().map((c) => [c.seq as number, h.send(PUT, c)] as const);
    for (const [seq, id] of sent) {
      replies[seq] = await h.reply(id);
    }
    if (replies.some((r) => r.type === "error")) {
      h.send(PUT, { stream, seq: i, offset: 0, data: "", abort: "a chunk failed" }); // as registry.Upload does
      break;
    }
  }
  return replies;
}

/** Reads the download of params to its end, as registry.Download does; the bytes, and
 * the error reply that ended it, if any. */
async function download(h: Host, stream: string, params: unknown, maxBytes = chunkBytes(GET)): Promise<[Buffer, Envelope | undefined]> {
  const parts: Buffer[] = [];
  for (let first = true; ; first = false) {
    const m = await h.reply(h.send(GET, { stream, max_bytes: maxBytes, wait_ms: 1000, ...(first ? { params } : {}) }));
    if (m.type === "error") {
      return [Buffer.concat(parts), m];
    }
    const data = Buffer.from(m.value.data, "base64");
    assert.ok(data.length <= maxBytes, `${data.length} bytes, asked for at most ${maxBytes}`);
    parts.push(data);
    if (m.value.eof) {
      return [Buffer.concat(parts), undefined];
    }
  }
}

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

test("upload out of order, read in order; download it back (8 MiB, sha256)", async (t) => {
  const h = await start(t);
  const blob = randomBytes((8 << 20) + 123);
  // Chunks of 1 MiB: nine, each pair arriving in reverse; then the host's own size.
  for (const [name, size] of [["small", (1 << 20) - 1], ["large", chunkBytes(PUT)]] as const) {
    const replies = await upload(h, `s-${name}`, blob, size, { name });
    const last = replies.pop()!;
    assert.deepEqual(last.value, { result: { bytes: blob.length, sha256: sha256(blob) } }, name);
    assert.ok(replies.length >= 2, `${replies.length + 1} chunks`);
    for (const r of replies) {
      assert.deepEqual([r.type, r.value], ["result", {}], JSON.stringify(r));
    }
    const [back, err] = await download(h, `d-${name}`, { name }, size);
    assert.equal(err, undefined);
    assert.equal(sha256(back), sha256(blob), name);
  }
  assert.deepEqual(await h.call("test.streams.stats", { wait_aborted: 0 }), { uploads: 0, downloads: 0, aborted: 0 });
});

test("upload: a handler's error is the reply of the first chunk it did not take", async (t) => {
  const h = await start(t);
  const replies = await upload(h, "s1", randomBytes(10 << 16), 1 << 16, { name: "f", fail_after: 100000 });
  // The handler reads 64 KiB at a time: it took chunks 0 and 1, and failed.
  assert.deepEqual(replies.slice(0, 2).map((r) => r.value), [{}, {}]);
  assert.deepEqual([replies[2].type, replies[2].code, replies[2].message], ["error", "failed", "failing after 131072 bytes as asked"]);
  assert.deepEqual(await h.call("test.streams.stats", { wait_aborted: 0 }), { uploads: 0, downloads: 0, aborted: 0 });
});

test("upload: an abort, and a cancelled chunk, give the stream up", async (t) => {
  const h = await start(t);
  const cs = chunks("s1", randomBytes(1000), 100, { name: "f", stall: true });
  assert.deepEqual(await h.call(PUT, cs[0]), {});
  const waiting = h.send(PUT, cs[1]); // the handler stalls: chunk 1 is never taken
  assert.deepEqual(await h.call(PUT, { stream: "s1", seq: 1, offset: 100, data: "", abort: "the host gave up" }), {});
  const m = await h.reply(waiting);
  assert.deepEqual([m.type, m.code, m.message], ["error", "aborted", "the host gave the upload up: the host gave up"]);
  assert.deepEqual(await h.call("test.streams.stats", { wait_aborted: 1 }), { uploads: 0, downloads: 0, aborted: 1 });

  const ds = chunks("s2", randomBytes(1000), 100, { name: "f", stall: true });
  assert.deepEqual(await h.call(PUT, ds[0]), {});
  const id = h.send(PUT, ds[1]);
  h.a.cancel(id);
  const r = await h.reply(id);
  assert.deepEqual([r.type, r.code, r.message], ["error", "aborted", "Request canceled by the host"]);
  assert.deepEqual(await h.call("test.streams.stats", { wait_aborted: 2 }), { uploads: 0, downloads: 0, aborted: 2 });
});

test("download: a handler's error after its bytes; an unknown blob; a held stream closed", async (t) => {
  const h = await start(t);
  const blob = randomBytes(300000);
  await upload(h, "s1", blob, 1 << 16, { name: "f" });
  const [got, err] = await download(h, "d1", { name: "f", fail_after: 100000 }, 1 << 16);
  assert.ok(got.equals(blob.subarray(0, 100000)));
  assert.deepEqual([err?.code, err?.message], ["failed", "failing after 100000 bytes as asked"]);
  const [none, unknown] = await download(h, "d2", { name: "nope" });
  assert.equal(none.length, 0);
  assert.deepEqual([unknown?.code, unknown?.message], ["invalid", 'no blob "nope"']);
  // A read that finds nothing within wait_ms returns no data; close ends the stream.
  assert.deepEqual(await h.call(GET, { stream: "d3", max_bytes: 10, wait_ms: 20, params: { name: "f", hold: true } }), { data: "", eof: false });
  assert.deepEqual(await h.call("test.streams.stats", { wait_aborted: 0 }), { uploads: 0, downloads: 1, aborted: 0 });
  assert.deepEqual(await h.call(GET, { stream: "d3", max_bytes: 1, wait_ms: 0, close: true }), { data: "", eof: true });
  assert.deepEqual(await h.call("test.streams.stats", { wait_aborted: 1 }), { uploads: 0, downloads: 0, aborted: 1 });
  const bad = await h.reply(h.send(GET, { stream: "d4", max_bytes: 0, wait_ms: 0 }));
  assert.deepEqual([bad.code, bad.message], ["invalid", "max_bytes must be above 0 and wait_ms at least 0"]);
});
