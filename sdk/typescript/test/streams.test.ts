// The stream recipe (streams.ts) in an adapter (streams_adapter.ts) over real pipes: the
// chunks and reads of docs/contracts.md "The chunks on the wire", sent as registry.Upload
// and registry.Download send them, with chunk K+1 of an upload arriving before chunk K.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { test } from "node:test";

import { CallError, Logger, t as types, type RequestContext } from "../src/index.js";
import { DIST, TestAdapter, type Envelope } from "./harness.js";
import { chunkBytes, Upload, type UploadChunk } from "./streams.js";

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

/** Resolves once every promise reaction queued so far ran: whatever a chunk can do
 * without another call has been done. */
const drained = () => new Promise<void>((r) => setImmediate(r));

/** The recipe's chunk handler called directly, as the SDK calls it: the chunk, and a
 * context whose signal the host's cancel aborts. */
function call<R>(up: Upload<{}, R>, c: Partial<UploadChunk<{}>> & { seq: number }, cancel = new AbortController()) {
  const ctx: RequestContext = { id: c.seq + 1, method: PUT, signal: cancel.signal, logger: new Logger({ level: "off" }) };
  return up.chunk({ stream: "s", offset: c.seq, data: new Uint8Array(), eof: false, abort: "", params: undefined, ...c }, ctx);
}

const bytes = (s: string) => Buffer.from(s);

/** How p settled, awaited at once (a rejection is not left unhandled meanwhile). */
const settled = <T>(p: Promise<T>): Promise<PromiseSettledResult<T>> =>
  p.then(
    (value) => ({ status: "fulfilled", value }),
    (reason) => ({ status: "rejected", reason }),
  );

// The host has two chunks in flight and sends each from its own goroutine, so chunk 1's
// call may come after chunk 2's, and after the handler returned. A chunk is answered only
// on its turn (after every earlier chunk's call came), so the answer never leaves a late
// earlier chunk a second, empty stream that waits for a chunk 0 that will not come (the
// test's timeout turns such a hang into a failure).
test("upload: a chunk that arrives late gets the stream's answer", { timeout: 10000 }, async () => {
  const boom = new CallError("failed", "boom");
  const cases = [
    {
      name: "the handler failed: chunk 2 came before chunk 1",
      handler: async (_p: {}, r: { read(n?: number): Promise<Uint8Array> }) => {
        await r.read(1);
        throw boom;
      },
      eof: false,
      want: [{ status: "rejected", reason: boom }, { status: "rejected", reason: boom }],
    },
    {
      name: "the handler returned early: the last chunk came before chunk 1",
      handler: async () => 42,
      eof: true,
      want: [{ status: "fulfilled", value: {} }, { status: "fulfilled", value: { result: 42 } }],
    },
  ];
  for (const c of cases) {
    const up = new Upload<{}, number>(types.object({}), c.handler);
    assert.deepEqual(await call(up, { seq: 0, data: bytes("a"), params: {} }), {}, c.name);
    await drained(); // the handler returned
    const later = settled(call(up, { seq: 2, data: bytes("c"), eof: c.eof }));
    await drained();
    const earlier = settled(call(up, { seq: 1, data: bytes("b") }));
    assert.deepEqual([await earlier, await later], c.want, c.name);
    if (!c.eof) {
      assert.deepEqual(await call(up, { seq: 1, abort: "chunk 1 failed" }), {}); // as registry.Upload does
    }
    assert.equal(up.size, 0, c.name);
  }
});

// Chunk 0 is answered with the handler's error before chunk 1, in flight, comes: chunk 1
// finds no stream and waits for a chunk 0 that will not come, until the host cancels its
// call (registry.Upload cancels the chunks after a failed one); then nothing is left.
test("upload: a chunk that arrives after the failure is given up with its call", { timeout: 10000 }, async () => {
  const up = new Upload<{}, number>(types.object({}), async () => {
    throw new CallError("failed", "boom");
  });
  await assert.rejects(call(up, { seq: 0, data: bytes("a"), params: {} }), { code: "failed" });
  const cancel = new AbortController();
  const late = settled(call(up, { seq: 1, data: bytes("b") }, cancel));
  await drained();
  cancel.abort(new CallError("aborted", "Request canceled by the host"));
  const got = await late;
  assert.ok(got.status === "rejected" && got.reason instanceof CallError, String(got));
  assert.deepEqual(await call(up, { seq: 0, abort: "chunk 0 failed" }), {});
  assert.equal(up.size, 0);
});
