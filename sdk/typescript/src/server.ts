import type { Readable } from "node:stream";

import { validateCatalog, type Catalog, type CatalogService } from "./catalog.js";
import { AdapterDefinitionError, CallError, CanceledError, ProtocolViolation } from "./errors.js";
import { natural, parseJSON, parseRaw, stringifyJSON, type Raw, type RawObject } from "./json.js";
import { Logger } from "./log.js";
import { ParamsError, Schema } from "./params.js";
import { Writer } from "./writer.js";
import {
  errorFrame,
  FrameReader,
  INITIALIZE,
  isIdLiteral,
  MAX_FRAME,
  MAX_IN_FLIGHT,
  memberSpans,
  PROTOCOL_VERSION,
  RawJSON,
  resultFrame,
} from "./wire.js";

/** How long handlers get to return after the connection ended, then how long their
 * replies get to be written: together well inside the 2 s of R49. */
export const HANDLER_WAIT_MS = 1000;
export const FLUSH_WAIT_MS = 500;

/** What a handler knows about its request, and its cancellation signal. */
export interface RequestContext {
  /** The request id. */
  readonly id: number;
  /** The method's full name. */
  readonly method: string;
  /** Aborted when the host cancels the request or disconnects; its reason is a
   * CanceledError ("Request canceled by the host" or "Host disconnected"). Return
   * promptly once it is: the request keeps its concurrency slot until you do (R38). */
  readonly signal: AbortSignal;
  /** The adapter's logger. */
  readonly logger: Logger;
}

/** A method's handler: params in, result (or a promise of it) out. Throw a CallError to
 * answer with an error code. */
export type Handler<P = any, R = unknown> = (params: P, ctx: RequestContext) => R | Promise<R>;

/** How a method's params are taken. */
export interface MethodOptions<P> {
  /** Receive the params as RawJSON, exactly as the host wrote them (no decoding). */
  raw?: boolean;
  /** The declared params: a schema (`t.object({...})`, see {@link t}), checked with the
   * Go SDK's rules and words before the handler runs, or a function that checks and
   * converts the params object (a thrown error answers `invalid` with its message).
   * Without it the handler gets the params object as parsed, integers beyond 2^53 as
   * bigint. */
  params?: Schema<P> | ((value: Record<string, unknown>) => P);
}

interface Method {
  handler: Handler;
  raw: boolean;
  schema?: Schema<unknown>;
  decode?: (value: Record<string, unknown>) => unknown;
}

/** The params span holds an integer JSON.parse may round (16 digits or more). */
const LONG_DIGITS = /[0-9]{16}/;

/** One service of the catalog: an id, a version and its methods. */
export class Service {
  readonly id: string;
  readonly version: number;
  /** @internal */
  readonly handlers = new Map<string, Method>();
  private readonly order: string[] = [];

  constructor(id: string, version: number) {
    this.id = id;
    this.version = version;
  }

  /** Registers `handler` for the method `name` (its full name, prefixed with the
   * service id). Registering a name twice is a duplicate in the catalog (R25). */
  method<P = Record<string, unknown>, R = unknown>(name: string, handler: Handler<P, R>, options: MethodOptions<P> = {}): this {
    if (typeof handler !== "function") {
      throw new AdapterDefinitionError(`method ${name}: the handler is not a function`);
    }
    this.order.push(name);
    if (!this.handlers.has(name)) {
      const p = options.params;
      this.handlers.set(name, {
        handler: handler as Handler,
        raw: options.raw === true,
        schema: p instanceof Schema ? p : undefined,
        decode: typeof p === "function" ? p : undefined,
      });
    }
    return this;
  }

  /** The service as it appears in the catalog. */
  entry(): CatalogService {
    return { id: this.id, version: this.version, methods: [...this.order] };
  }
}

/** What an Adapter is made of. */
export interface AdapterOptions<C> {
  /** The services advertised, in order. */
  services: Service[];
  /** The declared configuration: a schema (see {@link t}) or a function that checks and
   * converts initialize's configuration object; a refusal answers initialize with
   * `invalid`. Without it the configuration object is taken as is. */
  configuration?: Schema<C> | ((value: Record<string, unknown>) => C);
  /** Runs before initialize is answered; a thrown error refuses the handshake (a
   * CallError keeps its code, anything else is `failed`) and the host ends the
   * connection (R26). */
  onInitialize?: (config: C, signal: AbortSignal) => void | Promise<void>;
  /** Where the SDK's diagnostics go; the default writes hclog JSON lines to stderr. */
  logger?: Logger;
}

/** An adapter: its services and how it is configured. */
export class Adapter<C = Record<string, unknown>> {
  readonly services: Service[];
  readonly logger: Logger;
  /** The decoded configuration, set during initialize. */
  config: C | undefined;
  private readonly options: AdapterOptions<C>;

  constructor(options: AdapterOptions<C>) {
    this.options = options;
    this.services = options.services;
    this.logger = options.logger ?? new Logger();
  }

  /** The initialize result value, validated (R19-R25); throws AdapterDefinitionError. */
  catalog(): Catalog {
    if (!Array.isArray(this.services) || !this.services.every((s) => s instanceof Service)) {
      throw new AdapterDefinitionError("services must be an array of Service");
    }
    const services = this.services.map((s) => s.entry());
    const problem = validateCatalog(services);
    if (problem) {
      throw new AdapterDefinitionError("invalid catalog: " + problem);
    }
    return { protocol: PROTOCOL_VERSION, services };
  }

  /** @internal */
  async initialize(raw: Raw, signal: AbortSignal): Promise<void> {
    let config: C;
    const decode = this.options.configuration;
    const configuration = natural(raw) as Record<string, unknown>;
    if (decode) {
      try {
        config = decode instanceof Schema ? decode.decode(raw, "") : decode(configuration);
      } catch (e) {
        throw new CallError("invalid", "Invalid configuration: " + errorMessage(e));
      }
    } else {
      config = configuration as C;
    }
    this.config = config;
    if (this.options.onInitialize) {
      await this.options.onInitialize(config, signal);
    }
  }
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A request's cancellation. Its AbortController is made only when the handler asks for
 * the signal or the request is cancelled: most requests are neither, and making one
 * was a measurable part of a small call. */
class Cancel {
  private c: AbortController | undefined;
  get signal(): AbortSignal {
    return (this.c ??= new AbortController()).signal;
  }
  get aborted(): boolean {
    return this.c !== undefined && this.c.signal.aborted;
  }
  get reason(): unknown {
    return this.c?.signal.reason;
  }
  abort(reason: unknown): void {
    (this.c ??= new AbortController()).abort(reason);
  }
}

interface Call {
  controller: Cancel;
  done: Promise<void>;
}

const REQUEST_FIELDS = ["id", "method", "params", "type", "v"];

/** Decodes payloads, refusing invalid UTF-8 (R2). */
const utf8 = new TextDecoder("utf-8", { fatal: true });

function envelopeProblem(env: Record<string, unknown>, spans: Map<string, { start: number; end: number }>, text: string): string | undefined {
  const keys = Object.keys(env);
  const extra = keys.filter((k) => !REQUEST_FIELDS.includes(k)).sort();
  if (extra.length > 0) {
    return `unknown field (field "${extra[0]}")`;
  }
  const missing = REQUEST_FIELDS.filter((k) => !(k in env));
  if (missing.length > 0) {
    return `missing field (field "${missing[0]}")`;
  }
  const v = spans.get("v");
  if (!v || text.slice(v.start, v.end) !== "1") {
    return 'v is not 1 (field "v")';
  }
  if (typeof env.method !== "string") {
    return 'method is not a string (field "method")';
  }
  if (typeof env.params !== "object" || env.params === null || Array.isArray(env.params)) {
    return 'params is not an object (field "params")';
  }
  return undefined;
}

/** One connection being served. */
class Connection {
  private readonly methods = new Map<string, Method>();
  private readonly catalogText: string;
  private state: "new" | "initializing" | "ready" | "failed" = "new";
  private lastId = 0;
  private readonly calls = new Map<number, Call>();
  private initCall: { id: number; controller: AbortController } | undefined;
  /** initialize's run, while it has not settled (requests are waited for through calls). */
  private initDone: Promise<void> | undefined;
  private readonly writer: Writer;
  private readonly log: Logger;
  private ended = false;
  private endResolve!: (cause: Error | undefined) => void;
  /** Resolves with the cause once the connection ends (undefined: the input ended). */
  readonly end = new Promise<Error | undefined>((r) => (this.endResolve = r));

  constructor(
    private readonly adapter: Adapter<any>,
    catalog: Catalog,
    outFd: number,
  ) {
    this.log = adapter.logger;
    this.catalogText = JSON.stringify(catalog);
    for (const s of adapter.services) {
      for (const [name, m] of s.handlers) {
        this.methods.set(name, m);
      }
    }
    this.writer = new Writer(outFd, (e) => this.finish(new ProtocolViolation("writing to the host: " + e.message)));
  }

  /** Whether the connection has ended. */
  get isEnded(): boolean {
    return this.ended;
  }

  finish(cause: Error | undefined): void {
    if (!this.ended) {
      this.ended = true;
      this.endResolve(cause);
    }
  }

  dispatch(payload: Buffer): void {
    let text: string;
    let env: unknown;
    try {
      text = utf8.decode(payload);
      env = JSON.parse(text);
    } catch (e) {
      throw new ProtocolViolation("a payload that is not UTF-8 JSON: " + errorMessage(e));
    }
    if (typeof env !== "object" || env === null || Array.isArray(env)) {
      throw new ProtocolViolation("a payload that is not a JSON object");
    }
    const m = env as Record<string, unknown>;
    const spans = memberSpans(text);
    const idSpan = spans.get("id");
    const idOK = idSpan !== undefined && isIdLiteral(text.slice(idSpan.start, idSpan.end));
    const id = idOK ? (m.id as number) : 0;
    if (m.type === "cancel") {
      const v = spans.get("v");
      if (Object.keys(m).length === 3 && v && text.slice(v.start, v.end) === "1" && idOK) {
        this.cancel(id);
      }
      return; // a malformed cancel is ignored (A4)
    }
    if (m.type !== "request") {
      throw new ProtocolViolation(`an envelope of type ${JSON.stringify(m.type)} from the host (A28)`);
    }
    if (!idOK) {
      throw new ProtocolViolation("a request without a valid id (A28)");
    }
    if (id <= this.lastId) {
      throw new ProtocolViolation(`request id ${id} after ${this.lastId} (A14)`);
    }
    this.lastId = id;
    const problem = envelopeProblem(m, spans, text);
    if (problem) {
      this.writer.put(errorFrame(id, "invalid", "Invalid request envelope: " + problem)); // R12
      return;
    }
    const method = m.method as string;
    const params = m.params as Record<string, unknown>;
    if (method === INITIALIZE) {
      const ps = spans.get("params")!;
      this.initialize(id, params, text.slice(ps.start, ps.end));
      return;
    }
    if (this.state !== "ready") {
      this.writer.put(errorFrame(id, "invalid", "Adapter is not initialized")); // R27
      return;
    }
    const h = this.methods.get(method);
    if (!h) {
      this.writer.put(errorFrame(id, "unavailable", "Unknown method")); // R42
      return;
    }
    if (this.calls.size >= MAX_IN_FLIGHT) {
      this.writer.put(errorFrame(id, "busy", "Too many requests in flight")); // R40
      return;
    }
    let arg: unknown = params;
    if (h.raw || h.schema) {
      const ps = spans.get("params")!;
      arg = new RawJSON(text.slice(ps.start, ps.end)); // a schema decodes the text itself, exactly
    } else {
      const ps = spans.get("params")!;
      const span = text.slice(ps.start, ps.end);
      if (LONG_DIGITS.test(span)) {
        arg = parseJSON(span); // JSON.parse rounded the integers beyond 2^53
      }
    }
    const controller = new Cancel();
    const call: Call = { controller, done: Promise.resolve() };
    this.calls.set(id, call);
    // The call (in calls until its reply is queued, run's last act) holds the run: no
    // promise chained per request to follow it, which cost every request two promises
    // and a closure.
    call.done = this.run(id, method, h, arg, controller);
  }

  private cancel(id: number): void {
    const call = this.calls.get(id);
    if (call) {
      call.controller.abort(new CanceledError("Request canceled by the host"));
    } else if (this.initCall && this.initCall.id === id) {
      this.initCall.controller.abort(new CanceledError("Request canceled by the host"));
    }
    // unknown and finished ids are ignored (R37)
  }

  private initialize(id: number, params: Record<string, unknown>, paramsText: string): void {
    if (this.state !== "new") {
      this.writer.put(errorFrame(id, "invalid", "Adapter is already initialized")); // A7
      return;
    }
    this.state = "initializing";
    const controller = new AbortController();
    this.initCall = { id, controller };
    this.initDone = this.runInitialize(id, params, paramsText, controller.signal);
  }

  private async runInitialize(id: number, params: Record<string, unknown>, paramsText: string, signal: AbortSignal): Promise<void> {
    try {
      if (params.protocol !== PROTOCOL_VERSION) {
        throw new CallError("invalid", "Invalid initialize params: protocol is not 1");
      }
      const config = params.configuration;
      if (typeof config !== "object" || config === null || Array.isArray(config)) {
        throw new CallError("invalid", "Invalid initialize params: configuration is not an object");
      }
      // The configuration again, from the text: its integers exact (JSON.parse rounds them).
      const raw = (parseRaw(paramsText) as RawObject).entries.find(([k]) => k === "configuration")![1];
      await this.adapter.initialize(raw, signal);
    } catch (e) {
      this.initCall = undefined;
      this.state = "failed";
      const [code, message] = this.errorOf(e, signal, INITIALIZE, id);
      this.log.warn("initialize refused", { error: message, code });
      this.writer.put(errorFrame(id, code, message));
      return;
    }
    this.initCall = undefined;
    this.state = "ready"; // before the reply is queued: a request sent on seeing it is served
    this.writer.put(resultFrame(id, this.catalogText));
  }

  private async run(id: number, method: string, h: Method, arg: unknown, cancel: Cancel): Promise<void> {
    let frame: Buffer;
    try {
      if (h.schema || h.decode) {
        try {
          arg = h.schema ? h.schema.decode(parseRaw((arg as RawJSON).text), "") : h.decode!(arg as Record<string, unknown>);
        } catch (e) {
          if (h.schema && !(e instanceof ParamsError)) {
            throw e;
          }
          throw new CallError("invalid", "params: " + errorMessage(e));
        }
      }
      const log = this.log;
      const value = await h.handler(arg, {
        id,
        method,
        get signal() {
          return cancel.signal;
        },
        logger: log,
      });
      frame = this.resultOf(id, value, arg);
    } catch (e) {
      const [code, message] = this.errorOf(e, cancel, method, id);
      frame = errorFrame(id, code, message);
    }
    // The slot is free before the reply can reach the host (R40).
    this.calls.delete(id);
    this.writer.put(frame);
  }

  private resultOf(id: number, value: unknown, arg: unknown): Buffer {
    let text: string | undefined;
    try {
      if (value instanceof RawJSON) {
        if (value !== arg) {
          JSON.parse(value.text); // one JSON value, or SyntaxError
        }
        text = value.text;
      } else {
        text = stringifyJSON(value);
      }
    } catch (e) {
      return errorFrame(id, "failed", "Result is not JSON: " + errorMessage(e));
    }
    const f = resultFrame(id, text ?? "null");
    if (f.length - 4 > MAX_FRAME) {
      return errorFrame(id, "failed", "Result exceeds the adapter frame limit");
    }
    return f;
  }

  private errorOf(e: unknown, signal: Pick<AbortSignal, "aborted" | "reason">, method: string, id: number): [string, string] {
    if (e instanceof CallError) {
      return [e.code, e.message];
    }
    if (signal.aborted && (e === signal.reason || (e instanceof Error && e.name === "AbortError"))) {
      return ["aborted", errorMessage(signal.reason)];
    }
    if (e instanceof Error && e.name === "AbortError") {
      return ["aborted", e.message];
    }
    if (e instanceof Error && e.name === "TimeoutError") {
      return ["deadline", e.message || "Deadline exceeded"];
    }
    const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    this.log.error("handler failed", { method, id, error: message, stack: e instanceof Error ? e.stack : undefined });
    return ["failed", message];
  }

  /** Cancels every handler, waits for them and flushes their replies, boundedly.
   * Resolves to whether everything finished in time. */
  async shutdown(): Promise<boolean> {
    const reason = new CanceledError("Host disconnected");
    for (const call of this.calls.values()) {
      call.controller.abort(reason);
    }
    this.initCall?.controller.abort(reason);
    let complete = true;
    const running = [...this.calls.values()].map((c) => c.done);
    if (this.initCall && this.initDone) {
      running.push(this.initDone);
    }
    if (running.length > 0) {
      const all = Promise.allSettled(running).then(() => true);
      if (!(await withTimeout(all, HANDLER_WAIT_MS))) {
        complete = false;
        this.log.warn("handlers did not return after the connection ended; abandoning them", { count: this.calls.size + (this.initCall ? 1 : 0) });
      }
    }
    if (!(await withTimeout(this.writer.idle().then(() => true), FLUSH_WAIT_MS))) {
      complete = false;
      this.log.warn("replies could not be written after the connection ended; abandoning them");
    }
    return complete;
  }
}

function withTimeout(p: Promise<boolean>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/**
 * Serves `adapter` over one connection: frames are read from `input` and replies
 * written to the file descriptor `outFd`, until the input ends (resolves) or the host
 * violates the protocol (rejects with ProtocolViolation).
 *
 * The catalog is validated first: an invalid adapter rejects with
 * AdapterDefinitionError before anything is read (R19-R25). At the end every handler's
 * signal is aborted; handlers get about a second to return and their replies are
 * flushed, so serve settles within 2 s of the end of input (R49).
 */
export async function serve(adapter: Adapter<any>, input: Readable, outFd: number): Promise<void> {
  const catalog = adapter.catalog();
  const conn = new Connection(adapter, catalog, outFd);
  const reader = new FrameReader();
  const onData = (chunk: Buffer) => {
    try {
      for (const p of reader.push(chunk)) {
        if (conn.isEnded) {
          return;
        }
        conn.dispatch(p);
      }
    } catch (e) {
      conn.finish(e instanceof ProtocolViolation ? e : new ProtocolViolation(errorMessage(e)));
    }
  };
  const onEnd = () => conn.finish(reader.partial ? new ProtocolViolation("the input ended inside a frame") : undefined);
  const onError = (e: Error) => conn.finish(new ProtocolViolation("reading from the host: " + e.message));
  input.on("data", onData);
  input.on("end", onEnd);
  input.on("error", onError);
  const cause = await conn.end;
  input.off("data", onData);
  input.pause();
  await conn.shutdown();
  if (cause) {
    throw cause;
  }
}
