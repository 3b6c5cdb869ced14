/** The eight error codes of the protocol (R28); any other code is sent as `failed`. */
export const CODES = [
  "invalid",
  "closed",
  "aborted",
  "denied",
  "unavailable",
  "busy",
  "failed",
  "deadline",
] as const;

/** One of the eight error codes. */
export type Code = (typeof CODES)[number];

/** The longest error message sent, in UTF-8 bytes (R30). */
export const MAX_MESSAGE_BYTES = 4096;

const codeSet: ReadonlySet<string> = new Set(CODES);

/**
 * An error reply: throw it from a handler to answer with `code` and `message`. A code
 * that is not one of the eight is sent as `failed`; the message is capped at 4096 UTF-8
 * bytes on a character boundary.
 */
export class CallError extends Error {
  /** The error code sent. */
  readonly code: string;
  constructor(code: Code | string, message: string) {
    super(message);
    this.name = "CallError";
    this.code = code;
  }
}

/** The adapter cannot be served: an invalid catalog or a registration mistake. */
export class AdapterDefinitionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AdapterDefinitionError";
  }
}

/** The host broke the protocol in a way no error reply can answer (A14, A28). */
export class ProtocolViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ProtocolViolation";
  }
}

/** The reason a request's signal is aborted with: the host's cancel, or its disconnect. */
export class CanceledError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AbortError";
  }
}

/** Returns `code` if it is one of the eight codes, else `"failed"` (R28). */
export function normalizeCode(code: unknown): Code {
  return typeof code === "string" && codeSet.has(code) ? (code as Code) : "failed";
}

/** Caps `message` at 4096 UTF-8 bytes without splitting a character (R30). Lone
 * surrogates, which UTF-8 cannot carry, become U+FFFD. */
export function capMessage(message: string): string {
  const bytes = Buffer.from(message, "utf8");
  if (bytes.length <= MAX_MESSAGE_BYTES) {
    return bytes.toString("utf8");
  }
  let cut = MAX_MESSAGE_BYTES;
  while (cut > 0 && (bytes[cut] & 0xc0) === 0x80) {
    cut--;
  }
  return bytes.subarray(0, cut).toString("utf8");
}
