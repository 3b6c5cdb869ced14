/**
 * JSON that keeps every integer exact, in both directions.
 *
 * `JSON.parse` turns 9007199254740993 into 9007199254740992 and `JSON.stringify`
 * refuses a bigint: neither can carry the int64 and uint64 values a contract declares.
 * `parseJSON` gives an integer beyond 2^53 as a `bigint` (and every other number as a
 * `number`); `stringifyJSON` writes a `bigint` as its digits, a {@link JSONNumber} as
 * its literal and a `Uint8Array` as base64 (as the Go SDK writes `[]byte`).
 *
 * @module
 */

/** A JSON number kept as its literal text (Go's `json.Number`): written back digit for
 * digit. The params schema's `t.jsonNumber()` gives one. */
export class JSONNumber {
  readonly text: string;

  constructor(text: string) {
    if (!NUMBER.test(text)) {
      throw new SyntaxError(`${JSON.stringify(text)} is not a JSON number`);
    }
    this.text = text;
  }

  /** The literal, e.g. "1.50". */
  toString(): string {
    return this.text;
  }

  /** The number as a float64 (rounded where the literal has more digits). */
  toNumber(): number {
    return Number(this.text);
  }
}

const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** A JSON object as written: its members in order, duplicates kept (the params schema
 * refuses them, naming the member). @internal */
export class RawObject {
  constructor(readonly entries: Array<[string, Raw]>) {}
}

/** A parsed JSON value before any schema: numbers as their literal. @internal */
export type Raw = null | boolean | string | JSONNumber | Raw[] | RawObject;

/** A JSON value as parseJSON gives it. */
export type JSONValue = null | boolean | number | bigint | string | JSONValue[] | { [key: string]: JSONValue };

/** Nesting deeper than this is refused, as by the Go SDK. */
const MAX_DEPTH = 10000;

const NUMBER_AT = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f]/;

class Parser {
  i = 0;
  depth = 0;
  constructor(readonly s: string) {}

  fail(what: string): never {
    throw new SyntaxError(`${what} at offset ${this.i}`);
  }

  ws(): void {
    const s = this.s;
    for (;;) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
        this.i++;
      } else {
        return;
      }
    }
  }

  value(): Raw {
    this.ws();
    const c = this.s[this.i];
    switch (c) {
      case "{":
        return this.object();
      case "[":
        return this.array();
      case '"':
        return this.string();
      case "t":
        return this.word("true", true);
      case "f":
        return this.word("false", false);
      case "n":
        return this.word("null", null);
    }
    NUMBER_AT.lastIndex = this.i;
    const m = NUMBER_AT.exec(this.s);
    if (!m) {
      this.fail(c === undefined ? "unexpected end of JSON" : "invalid character");
    }
    this.i += m[0].length;
    return new JSONNumber(m[0]);
  }

  word<T>(w: string, v: T): T {
    if (!this.s.startsWith(w, this.i)) {
      this.fail("invalid literal");
    }
    this.i += w.length;
    return v;
  }

  string(): string {
    const s = this.s;
    const start = this.i;
    let j = start + 1;
    let escaped = false;
    for (;;) {
      const c = s.charCodeAt(j);
      if (Number.isNaN(c)) {
        this.fail("unterminated string");
      }
      if (c === 0x22) {
        break;
      }
      if (c === 0x5c) {
        escaped = true;
        j++;
      }
      j++;
    }
    this.i = j + 1;
    const body = s.slice(start + 1, j);
    if (escaped) {
      try {
        return JSON.parse(s.slice(start, j + 1)) as string;
      } catch {
        this.i = start;
        this.fail("invalid string");
      }
    }
    if (CONTROL.test(body)) {
      this.i = start;
      this.fail("control character in a string");
    }
    return body;
  }

  enter(): void {
    if (++this.depth > MAX_DEPTH) {
      this.fail("exceeded max depth");
    }
    this.i++;
    this.ws();
  }

  array(): Raw[] {
    this.enter();
    const out: Raw[] = [];
    if (this.s[this.i] === "]") {
      this.i++;
      this.depth--;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.ws();
      const c = this.s[this.i++];
      if (c === "]") {
        this.depth--;
        return out;
      }
      if (c !== ",") {
        this.i--;
        this.fail("expected ',' or ']' in an array");
      }
    }
  }

  object(): RawObject {
    this.enter();
    const entries: Array<[string, Raw]> = [];
    if (this.s[this.i] === "}") {
      this.i++;
      this.depth--;
      return new RawObject(entries);
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') {
        this.fail("expected a member name");
      }
      const k = this.string();
      this.ws();
      if (this.s[this.i] !== ":") {
        this.fail("expected ':' after a member name");
      }
      this.i++;
      entries.push([k, this.value()]);
      this.ws();
      const c = this.s[this.i++];
      if (c === "}") {
        this.depth--;
        return new RawObject(entries);
      }
      if (c !== ",") {
        this.i--;
        this.fail("expected ',' or '}' in an object");
      }
    }
  }
}

/** Parses one JSON text, numbers kept as their literals. Throws SyntaxError. @internal */
export function parseRaw(text: string): Raw {
  const p = new Parser(text);
  const v = p.value();
  p.ws();
  if (p.i !== text.length) {
    p.fail("data after the JSON value");
  }
  return v;
}

/** The number a literal stands for: an integer beyond 2^53 as a bigint, any other
 * number as a number. @internal */
export function numberOf(n: JSONNumber): number | bigint {
  const t = n.text;
  if (!/[.eE]/.test(t)) {
    const v = Number(t);
    if (!Number.isSafeInteger(v)) {
      return BigInt(t);
    }
    return v;
  }
  return Number(t);
}

/** Sets a member, "__proto__" included, as an own property. @internal */
export function setMember(o: Record<string, unknown>, k: string, v: unknown): void {
  if (k === "__proto__") {
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  } else {
    o[k] = v;
  }
}

/** A Raw value as plain JavaScript: objects, arrays, strings, booleans, null, numbers
 * (integers beyond 2^53 as bigint). A member named twice keeps its last value, as
 * JSON.parse does. @internal */
export function natural(v: Raw): JSONValue {
  if (v instanceof JSONNumber) {
    return numberOf(v);
  }
  if (Array.isArray(v)) {
    return v.map(natural);
  }
  if (v instanceof RawObject) {
    const o: { [key: string]: JSONValue } = {};
    for (const [k, x] of v.entries) {
      setMember(o, k, natural(x));
    }
    return o;
  }
  return v;
}

/**
 * Parses one JSON text as JSON.parse does, but exactly: an integer beyond 2^53
 * (int64, uint64 and wider) is a `bigint`, every other number a `number`. Throws
 * SyntaxError for text that is not one JSON value.
 */
export function parseJSON(text: string): JSONValue {
  return natural(parseRaw(text));
}

/**
 * Writes a value as compact JSON text, as JSON.stringify does, and also: a `bigint`
 * as its digits, a {@link JSONNumber} as its literal, a `Uint8Array` as a base64
 * string. NaN and the infinities are refused (TypeError), as the Go SDK refuses them,
 * rather than written as null.
 */
export function stringifyJSON(value: unknown): string {
  const out: string[] = [];
  write(value, out, "");
  return out.length === 0 ? "null" : out.join("");
}

function write(v: unknown, out: string[], key: string): void {
  switch (typeof v) {
    case "string":
      out.push(JSON.stringify(v));
      return;
    case "number":
      if (!Number.isFinite(v)) {
        throw new TypeError(`${v} is not a JSON number`);
      }
      out.push(Object.is(v, -0) ? "0" : String(v));
      return;
    case "bigint":
      out.push(v.toString());
      return;
    case "boolean":
      out.push(v ? "true" : "false");
      return;
    case "undefined":
    case "function":
    case "symbol":
      return; // left out of objects; null in arrays (below)
  }
  if (v === null) {
    out.push("null");
    return;
  }
  if (v instanceof JSONNumber) {
    out.push(v.text);
    return;
  }
  if (v instanceof Uint8Array) {
    out.push('"' + Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("base64") + '"');
    return;
  }
  const o = v as { toJSON?: (key: string) => unknown };
  if (typeof o.toJSON === "function") {
    write(o.toJSON(key), out, key);
    return;
  }
  if (Array.isArray(v)) {
    out.push("[");
    for (let i = 0; i < v.length; i++) {
      if (i > 0) {
        out.push(",");
      }
      const n = out.length;
      write(v[i], out, String(i));
      if (out.length === n) {
        out.push("null");
      }
    }
    out.push("]");
    return;
  }
  out.push("{");
  let first = true;
  for (const k of Object.keys(v as object)) {
    const x = (v as Record<string, unknown>)[k];
    const t = typeof x;
    if (t === "undefined" || t === "function" || t === "symbol") {
      continue;
    }
    if (!first) {
      out.push(",");
    }
    first = false;
    out.push(JSON.stringify(k), ":");
    write(x, out, k);
  }
  out.push("}");
}
