/**
 * Declared params, checked at run time: a schema of field helpers, as zod users write
 * them, with the TypeScript type inferred from it, and no dependency.
 *
 * ```ts
 * import { t, type Infer } from "@adapterkit/sdk";
 *
 * const Read = t.object({ probe: t.string(), seq: t.int64().default(0), tags: t.record(t.string()).optional() });
 * type Read = Infer<typeof Read>; // { probe: string; seq: number | bigint; tags?: Record<string, string> }
 * svc.method("example.device.read", (p) => read(p.probe), { params: Read });
 * ```
 *
 * The rules, and the words of every refusal, are the Go SDK's (package codec), so a
 * host gets the same `invalid` reply whichever language the adapter is written in:
 * an unknown member is refused (`field "x" is not known (known: probe, seq)`), as is a
 * member named twice (`field "seq": appears twice`), a value of another JSON kind
 * (`field "seq": expected an integer, got the number 1.5`) and a number that does not
 * fit (`field "seq": 9223372036854775808 does not fit int64`); the members are checked
 * in the order written and the first problem is the one named. Integers are exact: an
 * int64 or uint64 beyond 2^53 is a `bigint`, never a rounded number. A member left out,
 * or null (as a member, an array element or a record value), is the zero value of its
 * schema, as in Go (docs/protocol.md, A38-A39): `""`, `0`, `false`, empty bytes, `[]`,
 * `{}`, the zero time, an object of zero values; or the field's `.default(v)`,
 * undefined with `.optional()`, null with `.nullable()`. Declare what Go declares
 * nullable (a slice, map, pointer or `[]byte`) with `.nullable()`, so that nil travels
 * as null and comes back as null. A time (`t.time()`) is an RFC 3339 string as the Go
 * SDK writes it (A41).
 *
 * @module
 */
import { JSONNumber, natural, numberOf, parseRaw, RawObject, setMember, type JSONValue, type Raw } from "./json.js";

/** A value that does not fit the declared params; the message names the field. */
export class ParamsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ParamsError";
  }
}

/** The TypeScript type a schema decodes to: `type P = Infer<typeof P>`. */
export type Infer<S> = S extends Schema<infer T> ? T : never;

function where(path: string): string {
  return path ? `field "${path}": ` : "";
}

function member(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

function excerpt(lit: string): string {
  return lit.length > 40 ? lit.slice(0, 40) + "…" : lit;
}

function got(v: Raw): string {
  if (v === null) {
    return "null";
  }
  if (v === true || v === false) {
    return String(v);
  }
  if (typeof v === "string") {
    return "a string";
  }
  if (v instanceof JSONNumber) {
    return "the number " + excerpt(v.text);
  }
  return Array.isArray(v) ? "an array" : "an object";
}

function range(n: JSONNumber, name: string, path: string): ParamsError {
  return new ParamsError(`${where(path)}${excerpt(n.text)} does not fit ${name}`);
}

/** A JSON value as a Raw one (for values already decoded by JSON.parse). */
function toRaw(v: unknown): Raw {
  switch (typeof v) {
    case "number":
    case "bigint":
      return new JSONNumber(String(v));
    case "string":
    case "boolean":
      return v;
  }
  if (v === null || v === undefined) {
    return null;
  }
  if (v instanceof JSONNumber || v instanceof RawObject) {
    return v;
  }
  if (Array.isArray(v)) {
    return v.map(toRaw);
  }
  return new RawObject(Object.entries(v as object).map(([k, x]) => [k, toRaw(x)]));
}

/** A declared type of params: build one with {@link t}. */
export abstract class Schema<T> {
  /** The decoded type (for {@link Infer}; never set). */
  declare readonly _output: T;
  /** What a value of the schema is in JSON, in refusals: "an integer", "an object". */
  abstract readonly expected: string;

  /** @internal Decodes a parsed value at path; throws ParamsError. */
  abstract decode(v: Raw, path: string): T;

  /** @internal Whether null is a value of the schema (else it stands for "left out"). */
  takesNull(): boolean {
    return false;
  }

  /** @internal The value of a member left out (or null): the schema's zero value. */
  abstract absent(path: string): T;

  /** @internal Decodes a member, element or record value: null is left out unless the
   * schema takes it. */
  decodeOrZero(v: Raw, path: string): T {
    return v === null && !this.takesNull() ? this.absent(path) : this.decode(v, path);
  }

  /** Left out or null: undefined. */
  optional(): Schema<T | undefined> {
    return new Absent<T, undefined>(this, () => undefined, false);
  }

  /** null, or left out: null (as a Go pointer, slice or map that is nil). */
  nullable(): Schema<T | null> {
    return new Absent<T, null>(this, () => null, true);
  }

  /** Left out or null: `value` (a function gives a fresh value each time). */
  default(value: T | (() => T)): Schema<T> {
    return new Absent<T, T>(this, typeof value === "function" ? (value as () => T) : () => value, false);
  }

  /** Checks a JSON text against the schema; throws SyntaxError or ParamsError. */
  parseText(text: string): T {
    return this.decode(parseRaw(text), "");
  }

  /** Checks a value decoded from JSON (e.g. by JSON.parse); throws ParamsError. */
  parse(value: unknown): T {
    return this.decode(toRaw(value), "");
  }
}

class Absent<T, U> extends Schema<T | U> {
  readonly expected: string;
  constructor(
    readonly inner: Schema<T>,
    readonly make: () => U,
    readonly nulls: boolean,
  ) {
    super();
    this.expected = inner.expected;
  }
  decode(v: Raw, path: string): T | U {
    return v === null && this.nulls ? this.make() : this.inner.decode(v, path);
  }
  takesNull(): boolean {
    return this.nulls;
  }
  absent(): T | U {
    return this.make();
  }
}

class StringSchema extends Schema<string> {
  readonly expected = "a string";
  absent(): string {
    return "";
  }
  decode(v: Raw, path: string): string {
    if (typeof v !== "string") {
      throw mismatch(this, v, path);
    }
    return v;
  }
}

class BooleanSchema extends Schema<boolean> {
  readonly expected = "true or false";
  absent(): boolean {
    return false;
  }
  decode(v: Raw, path: string): boolean {
    if (v !== true && v !== false) {
      throw mismatch(this, v, path);
    }
    return v;
  }
}

function mismatch(s: Schema<unknown>, v: Raw, path: string): ParamsError {
  return new ParamsError(`${where(path)}expected ${s.expected}, got ${got(v)}`);
}

const FRACTION = /[.eE]/;

class IntSchema<T extends number | bigint> extends Schema<T> {
  readonly expected = "an integer";
  private readonly min: bigint;
  private readonly max: bigint;
  constructor(
    readonly name: string,
    bits: number,
    readonly signed: boolean,
  ) {
    super();
    this.min = signed ? -(1n << BigInt(bits - 1)) : 0n;
    this.max = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
  }
  absent(): T {
    return 0 as T;
  }
  decode(v: Raw, path: string): T {
    if (!(v instanceof JSONNumber)) {
      throw mismatch(this, v, path);
    }
    const s = v.text;
    if (FRACTION.test(s)) {
      throw new ParamsError(`${where(path)}expected an integer, got the number ${excerpt(s)}`);
    }
    if (!this.signed && s[0] === "-") {
      throw range(v, this.name, path); // -0 too, as Go's strconv.ParseUint
    }
    if (s.length <= 15) {
      const n = Number(s);
      if (n < Number(this.min) || n > Number(this.max)) {
        throw range(v, this.name, path);
      }
      return (n === 0 ? 0 : n) as T;
    }
    const b = BigInt(s);
    if (b < this.min || b > this.max) {
      throw range(v, this.name, path);
    }
    return numberOf(v) as T;
  }
}

// The smallest magnitude a float32 rounds to infinity: its largest value and half an ulp.
const FLOAT32_LIMIT = 3.4028235677973366e38;

class FloatSchema extends Schema<number> {
  readonly expected = "a number";
  constructor(readonly bits: 32 | 64) {
    super();
  }
  absent(): number {
    return 0;
  }
  decode(v: Raw, path: string): number {
    if (!(v instanceof JSONNumber)) {
      throw mismatch(this, v, path);
    }
    const f = Number(v.text);
    if (!Number.isFinite(f) || (this.bits === 32 && Math.abs(f) >= FLOAT32_LIMIT)) {
      throw range(v, "float" + this.bits, path);
    }
    return f;
  }
}

class JSONNumberSchema extends Schema<JSONNumber> {
  readonly expected = "a number";
  absent(): JSONNumber {
    return new JSONNumber("0");
  }
  decode(v: Raw, path: string): JSONNumber {
    if (!(v instanceof JSONNumber)) {
      throw mismatch(this, v, path);
    }
    return v;
  }
}

// Standard base64 with its padding, as Go's encoding/base64.StdEncoding reads it.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

class BytesSchema extends Schema<Uint8Array> {
  readonly expected = "a base64 string";
  absent(): Uint8Array {
    return new Uint8Array();
  }
  decode(v: Raw, path: string): Uint8Array {
    if (typeof v !== "string") {
      throw mismatch(this, v, path);
    }
    if (!BASE64.test(v)) {
      throw new ParamsError(`${where(path)}expected a base64 string, got a string that is not base64`);
    }
    return Uint8Array.from(Buffer.from(v, "base64"));
  }
}

// An RFC 3339 time as Go's time.Time reads it (A41): upper-case T and Z, a fraction of
// any length, an offset with its colon.
const RFC3339 = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:Z|([+-])([0-9]{2}):([0-9]{2}))$/;

/** The text of an RFC 3339 time as Go writes it (the same instant at the same offset,
 * the fraction cut to nine digits without trailing zeros, Z for offset zero), or
 * undefined for a text Go refuses. @internal */
export function normalTime(s: string): string | undefined {
  const m = RFC3339.exec(s);
  if (!m) {
    return undefined;
  }
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number);
  const days = [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (mo < 1 || mo > 12 || d < 1 || d > days[mo - 1] || h > 23 || mi > 59 || se > 59) {
    return undefined;
  }
  if (m[8] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) {
    return undefined;
  }
  const frac = (m[7] ?? "").slice(0, 9).replace(/0+$/, "");
  const zero = m[8] === undefined || (m[9] === "00" && m[10] === "00");
  return s.slice(0, 19) + (frac ? "." + frac : "") + (zero ? "Z" : `${m[8]}${m[9]}:${m[10]}`);
}

class TimeSchema extends Schema<string> {
  readonly expected = "an RFC 3339 time";
  absent(): string {
    return "0001-01-01T00:00:00Z";
  }
  decode(v: Raw, path: string): string {
    if (typeof v !== "string") {
      throw mismatch(this, v, path);
    }
    const n = normalTime(v);
    if (n === undefined) {
      throw new ParamsError(`${where(path)}${JSON.stringify(excerpt(v))} is not an RFC 3339 time`);
    }
    return n;
  }
}

class ArraySchema<T> extends Schema<T[]> {
  readonly expected = "an array";
  constructor(readonly elem: Schema<T>) {
    super();
  }
  absent(): T[] {
    return [];
  }
  decode(v: Raw, path: string): T[] {
    if (!Array.isArray(v)) {
      throw mismatch(this, v, path);
    }
    return v.map((x, i) => this.elem.decodeOrZero(x, `${path}[${i}]`));
  }
}

/** Refuses a member named twice, naming it as name(k) does. */
function once(o: RawObject, name: (k: string) => string): void {
  if (o.entries.length < 2) {
    return;
  }
  const seen = new Set<string>();
  for (const [k] of o.entries) {
    if (seen.has(k)) {
      throw new ParamsError(`field "${name(k)}": appears twice`);
    }
    seen.add(k);
  }
}

class RecordSchema<T> extends Schema<Record<string, T>> {
  readonly expected = "an object";
  constructor(readonly elem: Schema<T>) {
    super();
  }
  absent(): Record<string, T> {
    return {};
  }
  decode(v: Raw, path: string): Record<string, T> {
    if (!(v instanceof RawObject)) {
      throw mismatch(this, v, path);
    }
    const out: Record<string, T> = {};
    const seen = new Set<string>();
    for (const [k, x] of v.entries) {
      const at = `${path}[${k}]`;
      if (seen.has(k)) {
        throw new ParamsError(`field "${at}": appears twice`);
      }
      seen.add(k);
      setMember(out, k, this.elem.decodeOrZero(x, at));
    }
    return out;
  }
}

/** The fields of an object schema. */
export type Shape = Record<string, Schema<any>>;

type OptionalKeys<S extends Shape> = { [K in keyof S]: undefined extends Infer<S[K]> ? K : never }[keyof S];
type Flat<T> = { [K in keyof T]: T[K] };
/** The decoded type of an object schema's shape: fields that may be undefined are optional. */
export type ObjectOf<S extends Shape> = Flat<
  { [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Infer<S[K]> }
>;

class ObjectSchema<S extends Shape> extends Schema<ObjectOf<S>> {
  readonly expected = "an object";
  private readonly known: string;
  constructor(readonly shape: S) {
    super();
    const names = Object.keys(shape);
    this.known = names.length > 0 ? names.join(", ") : "none";
  }
  absent(path: string): ObjectOf<S> {
    return this.decode(new RawObject([]), path);
  }
  decode(v: Raw, path: string): ObjectOf<S> {
    if (!(v instanceof RawObject)) {
      throw mismatch(this, v, path);
    }
    const shape = this.shape;
    const given: Record<string, unknown> = {};
    const seen = new Set<string>();
    // In the order written: the first problem is the one named, as in Go.
    for (const [k, x] of v.entries) {
      const at = member(path, k);
      if (!Object.prototype.hasOwnProperty.call(shape, k)) {
        throw new ParamsError(`field "${at}" is not known (known: ${this.known})`);
      }
      if (seen.has(k)) {
        throw new ParamsError(`field "${at}": appears twice`);
      }
      seen.add(k);
      const s = shape[k];
      if (x !== null || s.takesNull()) {
        given[k] = s.decode(x, at);
      }
    }
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(shape)) {
      const x = k in given ? given[k] : shape[k].absent(member(path, k));
      if (x !== undefined) {
        setMember(out, k, x);
      }
    }
    return out as ObjectOf<S>;
  }
}

class AnySchema extends Schema<JSONValue> {
  readonly expected = "any value";
  takesNull(): boolean {
    return true;
  }
  absent(): JSONValue {
    return null;
  }
  decode(v: Raw, path: string): JSONValue {
    check(v, path);
    return natural(v);
  }
}

/** Any value is taken as written, but as in Go a member named twice and a number beyond
 * a float64 are refused. */
function check(v: Raw, path: string): void {
  if (v instanceof JSONNumber) {
    if (!Number.isFinite(Number(v.text))) {
      throw range(v, "float64", path);
    }
  } else if (Array.isArray(v)) {
    v.forEach((x, i) => check(x, `${path}[${i}]`));
  } else if (v instanceof RawObject) {
    once(v, (k) => `${path}[${k}]`);
    for (const [k, x] of v.entries) {
      check(x, `${path}[${k}]`);
    }
  }
}

/** The field helpers: `t.object({ name: t.string(), n: t.int32().default(0) })`. */
export const t = {
  /** A string. */
  string: (): Schema<string> => new StringSchema(),
  /** true or false. */
  boolean: (): Schema<boolean> => new BooleanSchema(),
  /** Integers of a size; 1.5, 1.0 and 1e3 are not integers. */
  int8: (): Schema<number> => new IntSchema<number>("int8", 8, true),
  int16: (): Schema<number> => new IntSchema<number>("int16", 16, true),
  int32: (): Schema<number> => new IntSchema<number>("int32", 32, true),
  /** A 64-bit integer: a number, or a bigint beyond 2^53 (never rounded). */
  int64: (): Schema<number | bigint> => new IntSchema<number | bigint>("int64", 64, true),
  uint8: (): Schema<number> => new IntSchema<number>("uint8", 8, false),
  uint16: (): Schema<number> => new IntSchema<number>("uint16", 16, false),
  uint32: (): Schema<number> => new IntSchema<number>("uint32", 32, false),
  /** An unsigned 64-bit integer: a number, or a bigint beyond 2^53 (never rounded). */
  uint64: (): Schema<number | bigint> => new IntSchema<number | bigint>("uint64", 64, false),
  /** A number held as a float64 (an integer too). */
  number: (): Schema<number> => new FloatSchema(64),
  float64: (): Schema<number> => new FloatSchema(64),
  /** A number held as a float32: one beyond its range is refused. */
  float32: (): Schema<number> => new FloatSchema(32),
  /** A number kept as its literal digits (Go's json.Number), written back unchanged. */
  jsonNumber: (): Schema<JSONNumber> => new JSONNumberSchema(),
  /** Bytes, sent as a base64 string (Go's []byte). */
  bytes: (): Schema<Uint8Array> => new BytesSchema(),
  /** A time (Go's time.Time): an RFC 3339 string, given as Go writes it
   * ("2024-01-02T03:04:05.5+01:00"); left out, the zero time "0001-01-01T00:00:00Z". */
  time: (): Schema<string> => new TimeSchema(),
  /** An array of elem. */
  array: <T>(elem: Schema<T>): Schema<T[]> => new ArraySchema(elem),
  /** An object of any member names, each value an elem (Go's map[string]T). */
  record: <T>(elem: Schema<T>): Schema<Record<string, T>> => new RecordSchema(elem),
  /** An object of the members of shape, and no other. */
  object: <S extends Shape>(shape: S): Schema<ObjectOf<S>> => new ObjectSchema(shape),
  /** Any JSON value, integers beyond 2^53 as bigint; left out, it is null. */
  any: (): Schema<JSONValue> => new AnySchema(),
};
