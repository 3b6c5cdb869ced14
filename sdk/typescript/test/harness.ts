import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { JSONNumber, RawObject, type Raw } from "../src/json.js";

/** dist/ of the compiled package. */
export const DIST = dirname(dirname(fileURLToPath(import.meta.url)));
export const ECHO = join(DIST, "examples", "echo.js");
export const FIXTURE = join(DIST, "test", "fixture.js");
const WAIT = 30_000;

export type Envelope = Record<string, any>;

/** An adapter process on pipes, driven frame by frame. */
export class TestAdapter {
  readonly proc: ChildProcessWithoutNullStreams;
  private frames: Array<Envelope | null> = [];
  private waiters: Array<(m: Envelope | null) => void> = [];
  private buf = Buffer.alloc(0);
  stderr = "";
  /** How a frame's payload text becomes the envelope recv returns. */
  parse: (text: string) => Envelope = JSON.parse;
  readonly exited: Promise<number | null>;

  /** Starts `node script`. Node connects a child's stdio with socket pairs, which cannot
   * be reopened to protect stdout at the descriptor level; with `pipe`, the adapter's
   * stdout and stderr are real pipes (through `cat`), as a Go host gives them. */
  constructor(script: string, env: Record<string, string> = {}, pipe = false) {
    const opts = { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] as ["pipe", "pipe", "pipe"] };
    this.proc = pipe
      ? spawn("/bin/sh", ["-c", `{ "${process.execPath}" "${script}" 2>&1 1>&4 | cat >&2; } 4>&1 | cat`], opts)
      : spawn(process.execPath, [script], opts);
    this.proc.stdout.on("data", (c: Buffer) => this.onData(c));
    this.proc.stdout.on("end", () => this.deliver(null));
    this.proc.stderr.on("data", (c: Buffer) => (this.stderr += c.toString()));
    this.exited = new Promise((resolve) => this.proc.on("exit", (code) => resolve(code)));
  }

  private onData(c: Buffer): void {
    this.buf = Buffer.concat([this.buf, c]);
    while (this.buf.length >= 4) {
      const n = this.buf.readUInt32BE(0);
      if (this.buf.length < 4 + n) {
        break;
      }
      const text = this.buf.subarray(4, 4 + n).toString("utf8");
      this.buf = this.buf.subarray(4 + n);
      this.deliver(this.parse(text));
    }
  }

  private deliver(m: Envelope | null): void {
    const w = this.waiters.shift();
    if (w) {
      w(m);
    } else {
      this.frames.push(m);
    }
  }

  sendRaw(b: Buffer): void {
    this.proc.stdin.write(b);
  }

  send(envelope: Envelope | string): void {
    const p = Buffer.from(typeof envelope === "string" ? envelope : JSON.stringify(envelope), "utf8");
    const h = Buffer.alloc(4);
    h.writeUInt32BE(p.length, 0);
    this.sendRaw(Buffer.concat([h, p]));
  }

  request(id: number, method: string, params: unknown = {}): void {
    this.send({ type: "request", v: 1, id, method, params });
  }

  cancel(id: number): void {
    this.send({ type: "cancel", v: 1, id });
  }

  async initialize(id = 1, configuration: unknown = {}): Promise<Envelope> {
    this.request(id, "system.adapter.initialize", { protocol: 1, configuration });
    return this.recv();
  }

  /** The next frame; null when the output ended. */
  next(timeout = WAIT): Promise<Envelope | null> {
    if (this.frames.length > 0) {
      return Promise.resolve(this.frames.shift()!);
    }
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error("no reply")), timeout);
      this.waiters.push((m) => {
        clearTimeout(t);
        resolve(m);
      });
    });
  }

  async recv(): Promise<Envelope> {
    const m = await this.next();
    if (m === null) {
      throw new Error("the adapter's output ended; stderr: " + this.stderr);
    }
    return m;
  }

  closeStdin(): void {
    this.proc.stdin.end();
  }

  kill(): void {
    if (this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill("SIGKILL");
    }
  }
}

/** A number literal in one canonical form: 1e21, 1000000000000000000000 and 1.0e21 are
 * the same; 2^53 and 2^53+1 are not. */
export function canonical(lit: string): string {
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(lit)!;
  const frac = m[3] ?? "";
  let digits = (m[2] + frac).replace(/^0+/, "");
  let exp = Number(m[4] ?? "0") - frac.length;
  const trimmed = digits.replace(/0+$/, "");
  exp += digits.length - trimmed.length;
  digits = trimmed;
  return digits === "" ? "0" : `${m[1]}${digits}e${exp}`;
}

/** A JSON value with its numbers exact and its objects' members in no order. */
export function exact(v: Raw): unknown {
  if (v instanceof JSONNumber) {
    return { number: canonical(v.text) };
  }
  if (Array.isArray(v)) {
    return v.map(exact);
  }
  if (v instanceof RawObject) {
    return new Map(v.entries.map(([k, x]) => [k, exact(x)]));
  }
  return v;
}
