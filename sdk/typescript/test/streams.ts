/**
 * The recipe of docs/contracts.md "Streams" for a TypeScript adapter: the adapter's side
 * of an upload method (contract.NewUpload on the Go side, sent by registry.Upload) and of
 * a download method (contract.NewDownload, read by registry.Download). The SDK has no
 * stream helper; an adapter copies this file (it uses only the SDK and node:buffer,
 * importing from "@adapterkit/sdk" instead of "../src/index.js") and registers one
 * instance per method:
 *
 * ```ts
 * const put = new Upload(t.object({ name: t.string() }), async (p, reader, signal) => {
 *   for (let b = await reader.read(); b.length > 0; b = await reader.read()) { ... }
 *   return { bytes: n };
 * });
 * put.register(svc, "example.files.put");
 * const get = new Download(t.object({ name: t.string() }), async (p, writer, signal) => {
 *   await writer.write(bytes); // waits while the host is behind
 * });
 * get.register(svc, "example.files.get");
 * ```
 *
 * Upload: the host sends chunks {"stream", "seq", "offset", "data" (base64), "eof"?,
 * "params"? (chunk 0), "abort"?}, up to two in flight, so chunk K+1 may arrive first:
 * chunk() hands the data to the handler in order of seq, answers {} once the handler's
 * reader took it, and the last chunk {"result": R} once the handler returned; the
 * handler's error is the reply of the first chunk whose bytes it did not take.
 *
 * Download: the host makes waiting reads {"stream", "max_bytes", "wait_ms", "params"?
 * (the first read), "close"?}; the first starts the handler, each returns
 * {"data": base64, "eof"} with what the handler wrote so far (nothing after wait_ms), and
 * the handler's error is the reply of the read after its last bytes. The handler's
 * write waits while about two chunks wait for the host.
 *
 * Unlike the Go SDK's helpers, this recipe does not give up a stream that the host
 * abandons without a word (no chunk or read for 30 s): a host that goes away ends the
 * connection, which ends the adapter.
 */
import { Buffer } from "node:buffer";

import { CallError, MAX_FRAME, Schema, Service, t, type RequestContext } from "../src/index.js";

/** The params of one call of an upload method. */
export interface UploadChunk<P> {
  stream: string;
  seq: number | bigint;
  offset: number | bigint;
  data: Uint8Array;
  eof: boolean;
  abort: string;
  params: P | undefined;
}

/** The params of one waiting read of a download method. */
export interface DownloadRead<P> {
  stream: string;
  max_bytes: number | bigint;
  wait_ms: number | bigint;
  close: boolean;
  params: P | undefined;
}

/** The most bytes one chunk carries through the method named method: base64 of a frame
 * less 1 KiB for the envelope, a multiple of 3 (as the Go host and SDK count). */
export function chunkBytes(method: string): number {
  return Math.floor((MAX_FRAME - 1024 - method.length) / 4) * 3;
}

/** A promise with its resolve at hand. */
class Deferred<T = void> {
  resolve!: (v: T) => void;
  readonly promise = new Promise<T>((r) => (this.resolve = r));
}

/** A promise that resolves to "aborted" once signal is aborted, and a function that
 * stops listening. */
function abortedOf(signal: AbortSignal): [Promise<"aborted">, () => void] {
  const s = new Deferred<"aborted">();
  const on = () => s.resolve("aborted");
  if (signal.aborted) {
    on();
  } else {
    signal.addEventListener("abort", on, { once: true });
  }
  return [s.promise, () => signal.removeEventListener("abort", on)];
}

/** What an upload's handler reads: the stream's bytes in order. */
export class StreamReader {
  private buf: Uint8Array = new Uint8Array();
  private eof = false;
  /** A chunk offered by chunk(), and how to tell it that the chunk was taken. */
  private offer: { data: Uint8Array; taken: () => void } | undefined;
  private closed = false;
  private wake = new Deferred();

  constructor(private readonly signal: AbortSignal) {
    signal.addEventListener("abort", () => this.wake.resolve(), { once: true });
  }

  /** Up to n bytes of the stream; an empty array at its end. Rejects with the abort
   * reason once the stream was given up. */
  async read(n = 65536): Promise<Uint8Array> {
    while (this.buf.length === 0 && !this.eof) {
      this.signal.throwIfAborted();
      if (this.offer) {
        this.buf = this.offer.data;
        this.offer.taken();
        this.offer = undefined;
      } else if (this.closed) {
        this.eof = true;
      } else {
        await this.wake.promise;
        this.wake = new Deferred();
      }
    }
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(out.length);
    return out;
  }

  /** @internal Offers a chunk's bytes; resolves once read() took them. */
  give(data: Uint8Array): Promise<void> {
    const s = new Deferred();
    this.offer = { data, taken: s.resolve };
    this.wake.resolve();
    return s.promise;
  }

  /** @internal Withdraws a chunk nobody took. */
  withdraw(): void {
    this.offer = undefined;
  }

  /** @internal No more chunks: read() returns the end once the last is read. */
  close(): void {
    this.closed = true;
    this.wake.resolve();
  }
}

/** An upload's handler: the method's params, the stream's reader and a signal aborted
 * when the host gives the stream up. Its result is the last chunk's reply. */
export type UploadHandler<P, R> = (params: P, reader: StreamReader, signal: AbortSignal) => Promise<R>;

/** One upload under way. */
class UploadStream<R> {
  next = 0; // the seq whose turn it is
  turn = new Deferred(); // resolved when next moves
  readonly controller = new AbortController();
  readonly reader = new StreamReader(this.controller.signal);
  /** Resolves once the handler returned (never rejects); error is set if it threw. */
  readonly done = new Deferred<"done">();
  result: R | undefined;
  error: unknown;
  failed = false;
}

/** The adapter's side of one upload method. */
export class Upload<P, R> {
  /** The chunk's params, checked by the SDK before chunk() runs. */
  readonly schema: Schema<UploadChunk<P>>;
  private readonly streams = new Map<string, UploadStream<R>>();

  constructor(
    private readonly params: Schema<P>,
    private readonly handler: UploadHandler<P, R>,
  ) {
    this.schema = t.object({
      stream: t.string(),
      seq: t.int64(),
      offset: t.int64(),
      data: t.bytes(),
      eof: t.boolean(),
      abort: t.string(),
      params: params.optional(),
    }) as Schema<UploadChunk<P>>;
  }

  /** Registers the method name on svc. */
  register(svc: Service, name: string): void {
    svc.method(name, (c, ctx) => this.chunk(c, ctx), { params: this.schema });
  }

  /** How many streams are under way. */
  get size(): number {
    return this.streams.size;
  }

  /** The handler of one chunk's call. */
  async chunk(c: UploadChunk<P>, ctx: RequestContext): Promise<{ result?: R }> {
    const seq = Number(c.seq);
    let st = this.streams.get(c.stream);
    if (c.abort !== "") {
      if (st) {
        st.controller.abort(new CallError("aborted", `the host gave the upload up: ${c.abort}`));
        this.drop(c.stream, st);
      }
      return {};
    }
    if (!st) {
      st = new UploadStream<R>();
      this.streams.set(c.stream, st);
    }
    const [aborted, unlisten] = abortedOf(ctx.signal);
    try {
      // Wait for this chunk's turn: the host sends every chunk (or cancels its call),
      // so the turn comes even after the handler returned.
      while (st.next !== seq) {
        if (st.next > seq) {
          throw new CallError("invalid", `chunk ${seq} of the stream was sent twice`);
        }
        if ((await Promise.race([st.turn.promise, aborted])) === "aborted") {
          throw this.abort(c.stream, st, ctx.signal.reason);
        }
      }
      if (seq === 0) {
        this.start(st, c.params ?? this.params.parse({}));
      }
      let taken = false; // the handler took the chunk's bytes: its call succeeded
      if (c.data.length > 0) {
        const w = await Promise.race([st.reader.give(c.data).then(() => "taken" as const), st.done.promise, aborted]);
        if (w === "aborted") {
          throw this.abort(c.stream, st, ctx.signal.reason);
        }
        taken = w === "taken";
        if (!taken) {
          st.reader.withdraw(); // the handler returned without reading them
        }
      }
      if (c.eof) {
        st.reader.close();
      }
      st.next++;
      st.turn.resolve();
      st.turn = new Deferred();
      if (!c.eof) {
        return taken || c.data.length === 0 ? {} : this.failed(c.stream, st);
      }
      if ((await Promise.race([st.done.promise, aborted])) === "aborted") {
        throw this.abort(c.stream, st, ctx.signal.reason);
      }
      this.drop(c.stream, st);
      if (st.failed) {
        throw st.error;
      }
      return { result: st.result };
    } finally {
      unlisten();
    }
  }

  /** Runs the handler of st, on chunk 0's turn. */
  private start(st: UploadStream<R>, params: P): void {
    const signal = st.controller.signal;
    Promise.resolve()
      .then(() => this.handler(params, st.reader, signal))
      .then(
        (r) => {
          st.result = r;
        },
        (e) => {
          st.failed = true;
          st.error = e;
        },
      )
      .finally(() => {
        st.controller.abort(new CallError("aborted", "the stream's handler returned"));
        st.done.resolve("done");
      });
  }

  /** The reply to a chunk of a stream whose handler returned before the end: its error,
   * which ends the stream, or {} (the chunk is dropped). */
  private failed(name: string, st: UploadStream<R>): {} {
    if (!st.failed) {
      return {};
    }
    this.drop(name, st);
    throw st.error;
  }

  /** Gives up the stream of a chunk whose call was cancelled; returns the call's error. */
  private abort(name: string, st: UploadStream<R>, reason: unknown): unknown {
    st.controller.abort(reason);
    this.drop(name, st);
    return reason;
  }

  private drop(name: string, st: UploadStream<R>): void {
    if (this.streams.get(name) === st) {
      this.streams.delete(name);
    }
  }
}

/** What a download's handler writes to. */
export class StreamWriter {
  constructor(private readonly st: DownloadStream) {}

  /** Adds data to what the host's reads return, waiting while about two chunks wait
   * for the host. Rejects with the abort reason once the stream was given up. */
  async write(data: Uint8Array): Promise<void> {
    const st = this.st;
    while (data.length > 0) {
      st.controller.signal.throwIfAborted();
      const room = st.limit - st.length;
      if (room > 0) {
        const k = Math.min(room, data.length);
        st.parts.push(data.slice(0, k)); // a copy: the caller may reuse data
        st.length += k;
        data = data.subarray(k);
        st.signal();
        continue;
      }
      const [aborted, unlisten] = abortedOf(st.controller.signal);
      await Promise.race([st.change.promise, aborted]);
      unlisten();
    }
  }
}

/** A download's handler: the method's params, the stream's writer and a signal aborted
 * when the host gives the stream up. Returning ends the stream; a thrown error is the
 * reply to the read after the bytes written before it. */
export type DownloadHandler<P> = (params: P, writer: StreamWriter, signal: AbortSignal) => Promise<void>;

/** One download under way: the bytes its handler wrote that no read took yet. */
class DownloadStream {
  readonly controller = new AbortController();
  parts: Uint8Array[] = [];
  length = 0;
  done = false; // the handler returned
  failed = false;
  error: unknown;
  change = new Deferred(); // resolved when parts or done changed

  constructor(readonly limit: number) {}

  signal(): void {
    this.change.resolve();
    this.change = new Deferred();
  }

  /** Takes the first n bytes written. */
  take(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let k = 0;
    while (k < n) {
      const p = this.parts[0];
      const m = Math.min(p.length, n - k);
      out.set(p.subarray(0, m), k);
      k += m;
      if (m === p.length) {
        this.parts.shift();
      } else {
        this.parts[0] = p.subarray(m);
      }
    }
    this.length -= n;
    this.signal();
    return out;
  }
}

/** The reply to one read: at most max_bytes of the stream, and whether it ended. */
export interface DownloadChunk {
  data: string;
  eof: boolean;
}

/** The adapter's side of one download method. */
export class Download<P> {
  /** The read's params, checked by the SDK before read() runs. */
  readonly schema: Schema<DownloadRead<P>>;
  private readonly streams = new Map<string, DownloadStream>();
  private max = 0; // the most bytes one read returns: set by register

  constructor(
    private readonly params: Schema<P>,
    private readonly handler: DownloadHandler<P>,
  ) {
    this.schema = t.object({
      stream: t.string(),
      max_bytes: t.int64(),
      wait_ms: t.int64(),
      close: t.boolean(),
      params: params.optional(),
    }) as Schema<DownloadRead<P>>;
  }

  /** Registers the method name on svc. */
  register(svc: Service, name: string): void {
    this.max = chunkBytes(name);
    svc.method(name, (r, ctx) => this.read(r, ctx), { params: this.schema });
  }

  /** How many streams are under way. */
  get size(): number {
    return this.streams.size;
  }

  /** The handler of one waiting read. */
  async read(r: DownloadRead<P>, ctx: RequestContext): Promise<DownloadChunk> {
    const none = { data: "", eof: false };
    const maxBytes = Number(r.max_bytes);
    if (maxBytes <= 0 || Number(r.wait_ms) < 0) {
      throw new CallError("invalid", "max_bytes must be above 0 and wait_ms at least 0");
    }
    let st = this.streams.get(r.stream);
    if (r.close) {
      if (st) {
        st.controller.abort(new CallError("aborted", "the host closed the download"));
        this.streams.delete(r.stream);
      }
      return { data: "", eof: true };
    }
    if (!st) {
      st = this.start(r.stream, r.params ?? this.params.parse({}));
    }
    const [aborted, unlisten] = abortedOf(ctx.signal);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((res) => (timer = setTimeout(() => res("timeout"), Number(r.wait_ms))));
    try {
      while (st.length === 0 && !st.done) {
        const w = await Promise.race([st.change.promise, timeout, aborted]);
        if (w === "timeout") {
          return none; // nothing yet: an empty chunk
        }
        if (w === "aborted") {
          st.controller.abort(ctx.signal.reason);
          this.drop(r.stream, st);
          throw ctx.signal.reason;
        }
      }
    } finally {
      clearTimeout(timer);
      unlisten();
    }
    const data = st.take(Math.min(st.length, maxBytes, this.max));
    if (!st.done || st.length > 0) {
      return { data: data.toString("base64"), eof: false };
    }
    if (!st.failed) {
      this.drop(r.stream, st);
      return { data: data.toString("base64"), eof: true };
    }
    // The handler failed: its last bytes go first, its error is the reply to the read
    // after them.
    if (data.length > 0) {
      return { data: data.toString("base64"), eof: false };
    }
    this.drop(r.stream, st);
    throw st.error;
  }

  /** Starts the stream name and its handler, on its first read. */
  private start(name: string, params: P): DownloadStream {
    const st = new DownloadStream(2 * this.max);
    this.streams.set(name, st);
    const signal = st.controller.signal;
    Promise.resolve()
      .then(() => this.handler(params, new StreamWriter(st), signal))
      .catch((e) => {
        st.failed = true;
        st.error = e;
      })
      .finally(() => {
        st.done = true;
        st.signal();
        st.controller.abort(new CallError("aborted", "the stream's handler returned"));
      });
    return st;
  }

  private drop(name: string, st: DownloadStream): void {
    if (this.streams.get(name) === st) {
      this.streams.delete(name);
    }
  }
}
