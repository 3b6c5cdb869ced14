import { capMessage, normalizeCode, ProtocolViolation } from "./errors.js";
import { parseJSON, type JSONValue } from "./json.js";

/** The largest payload, in bytes, the 4-byte prefix excluded (R3, A1). */
export const MAX_FRAME = 4 << 20;
/** The largest request id (R14). */
export const MAX_ID = 2 ** 53 - 1;
/** Requests a connection runs at once; one more is answered busy (R40). */
export const MAX_IN_FLIGHT = 32;
/** The protocol version, also every envelope's `v` (A5). */
export const PROTOCOL_VERSION = 1;
/** The handshake's method (R17). */
export const INITIALIZE = "system.adapter.initialize";

/**
 * JSON text passed through without decoding or re-encoding. A method registered with
 * `{ raw: true }` receives its params as a RawJSON (the object exactly as the host wrote
 * it); a handler returning a RawJSON has its text sent verbatim as the result value (it
 * is checked to be one JSON value unless it is the params received). Integers beyond
 * 2^53 keep every digit this way.
 */
export class RawJSON {
  constructor(readonly text: string) {}
  /** The JSON text. */
  toString(): string {
    return this.text;
  }
  /** The text decoded with parseJSON: integers beyond 2^53 as bigint, never rounded. */
  parse(): JSONValue {
    return parseJSON(this.text);
  }
}

/** Splits the host's byte stream into frame payloads (R1, R4, R5). */
export class FrameReader {
  private chunks: Buffer[] = [];
  private size = 0;

  /** Adds input; returns the complete payloads. Throws ProtocolViolation on a zero or
   * oversized length, as soon as the header is seen (the body is never waited for). */
  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.size += chunk.length;
    const out: Buffer[] = [];
    while (this.size >= 4) {
      const head = this.peek(4);
      const n = head.readUInt32BE(0);
      if (n === 0 || n > MAX_FRAME) {
        const hint = looksLikeText(head) ? `; ${TEXT_HINT}` : "";
        throw new ProtocolViolation((n === 0 ? "a zero-length frame" : `a frame of ${n} bytes exceeds the limit`) + hint);
      }
      if (this.size < 4 + n) {
        break;
      }
      const all = this.take(4 + n);
      out.push(all.subarray(4));
    }
    return out;
  }

  /** Whether a partial frame is buffered. */
  get partial(): boolean {
    return this.size > 0;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0].length >= n) {
      return this.chunks[0].subarray(0, n);
    }
    const all = Buffer.concat(this.chunks);
    this.chunks = [all];
    return all.subarray(0, n);
  }

  private take(n: number): Buffer {
    let first = this.chunks[0];
    if (first.length < n) {
      first = Buffer.concat(this.chunks);
      this.chunks = [first];
    }
    const out = first.subarray(0, n);
    if (first.length === n) {
      this.chunks.shift();
    } else {
      this.chunks[0] = first.subarray(n);
    }
    this.size -= n;
    return out;
  }
}

/** The hint given when the input reads as text. */
export const TEXT_HINT =
  "the input reads as text, not as length-prefixed frames: an adapter is started by a host " +
  "(try `adapterctl check PATH`), not fed text by hand";

function looksLikeText(b: Buffer): boolean {
  for (const c of b) {
    if (!((c >= 32 && c < 127) || c === 9 || c === 10 || c === 13)) {
      return false;
    }
  }
  return true;
}

/** A top-level member of a JSON object: its value's text span. */
export interface Span {
  start: number;
  end: number;
}

function skipWS(s: string, i: number): number {
  for (;;) {
    const c = s.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
      i++;
    } else {
      return i;
    }
  }
}

/** Returns the index just past the string starting at s[i] === '"'. */
function skipString(s: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = s.indexOf('"', j);
    if (q < 0) {
      throw new SyntaxError("unterminated string");
    }
    let k = q - 1;
    while (s.charCodeAt(k) === 0x5c) {
      k--;
    }
    if ((q - 1 - k) % 2 === 0) {
      return q + 1;
    }
    j = q + 1;
  }
}

/** Returns the index just past the JSON value starting at s[i]. */
function skipValue(s: string, i: number): number {
  const c = s[i];
  if (c === '"') {
    return skipString(s, i);
  }
  if (c === "{" || c === "[") {
    let depth = 0;
    let j = i;
    for (;;) {
      const d = s[j];
      if (d === '"') {
        j = skipString(s, j);
        continue;
      }
      if (d === "{" || d === "[") {
        depth++;
      } else if (d === "}" || d === "]") {
        depth--;
        if (depth === 0) {
          return j + 1;
        }
      } else if (d === undefined) {
        throw new SyntaxError("unterminated value");
      }
      j++;
    }
  }
  let j = i;
  for (;;) {
    const d = s.charCodeAt(j);
    if (Number.isNaN(d) || d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x09 || d === 0x0a || d === 0x0d) {
      return j;
    }
    j++;
  }
}

/**
 * The text spans of a JSON object's top-level members. `text` must already be known to
 * be one valid JSON object (JSON.parse accepted it). The last of duplicate keys wins, as
 * with JSON.parse.
 */
export function memberSpans(text: string): Map<string, Span> {
  const spans = new Map<string, Span>();
  let i = skipWS(text, 0) + 1; // past '{'
  i = skipWS(text, i);
  if (text[i] === "}") {
    return spans;
  }
  for (;;) {
    const keyEnd = skipString(text, i);
    const rawKey = text.slice(i + 1, keyEnd - 1);
    const key = rawKey.includes("\\") ? (JSON.parse(text.slice(i, keyEnd)) as string) : rawKey;
    i = skipWS(text, keyEnd) + 1; // past ':'
    i = skipWS(text, i);
    const end = skipValue(text, i);
    spans.set(key, { start: i, end });
    i = skipWS(text, end);
    if (text[i] === ",") {
      i = skipWS(text, i + 1);
      continue;
    }
    return spans;
  }
}

const INTEGER = /^[1-9][0-9]{0,15}$/;

/** Whether `literal` is a valid request id: an integer literal from 1 to 2^53-1 (R14, A6). */
export function isIdLiteral(literal: string): boolean {
  return INTEGER.test(literal) && Number(literal) <= MAX_ID;
}

/** Prefixes `payload` with its 4-byte big-endian length (R1). */
export function frame(payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(4 + payload.length);
  out.writeUInt32BE(payload.length, 0);
  payload.copy(out, 4);
  return out;
}

/** A framed result envelope whose value is `valueText` (JSON text). */
export function resultFrame(id: number, valueText: string): Buffer {
  const head = `{"type":"result","v":1,"id":${id},"value":`;
  const n = Buffer.byteLength(head) + Buffer.byteLength(valueText) + 1;
  const out = Buffer.allocUnsafe(4 + n);
  out.writeUInt32BE(n, 0);
  let o = 4 + out.write(head, 4, "utf8");
  o += out.write(valueText, o, "utf8");
  out[o] = 0x7d;
  return out;
}

/** A framed error envelope: the code normalised (R28), the message capped (R30). */
export function errorFrame(id: number, code: string, message: string): Buffer {
  const payload = `{"type":"error","v":1,"id":${id},"code":"${normalizeCode(code)}","message":${JSON.stringify(capMessage(message))}}`;
  return frame(Buffer.from(payload, "utf8"));
}
