import { writeSync } from "node:fs";
import { basename } from "node:path";

/** The log levels, least severe first, with the names go-hclog writes. */
export const LEVELS = ["trace", "debug", "info", "warn", "error"] as const;
/** A log level. */
export type Level = (typeof LEVELS)[number];

function rank(level: Level | "off"): number {
  return level === "off" ? LEVELS.length : LEVELS.indexOf(level);
}

/** The environment variable a host sets to choose adapters' log level. */
export const LEVEL_ENV = "ADAPTERKIT_LOG_LEVEL";

/** The adapter's executable name without its version and extension, as the Go SDK names
 * its logger (`tsecho` for `tsecho_v1.0.0`). */
export function defaultModule(): string {
  const name = basename(process.argv[1] ?? "adapter").replace(/\.(exe|js|mjs|cjs)$/, "");
  return name.replace(/_v[0-9].*$/, "") || "adapter";
}

/** `$ADAPTERKIT_LOG_LEVEL` when it names a level (or "off"), else "info". */
export function defaultLevel(): Level | "off" {
  const l = (process.env[LEVEL_ENV] ?? "").toLowerCase();
  return l === "off" || (LEVELS as readonly string[]).includes(l) ? (l as Level | "off") : "info";
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

/** The current time in hclog's JSON format: local time, microseconds, offset or Z. */
export function timestamp(d = new Date()): string {
  const base =
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}000`;
  const off = -d.getTimezoneOffset();
  if (off === 0) {
    return base + "Z";
  }
  const a = Math.abs(off);
  return `${base}${off > 0 ? "+" : "-"}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

function plain(v: unknown): unknown {
  if (v instanceof Error) {
    return v.message;
  }
  if (typeof v === "bigint") {
    return v.toString();
  }
  return v;
}

/**
 * Writes go-hclog JSON lines, one record per line, at or above `level`, to stderr (the
 * only place an adapter may write to: stdout carries frames, R6). The module defaults to
 * the executable's name without its version, the level to `$ADAPTERKIT_LOG_LEVEL`
 * (trace .. error, off; default info), which the host sets:
 *
 *     {"@level":"info","@message":"ready","@module":"adapter","@timestamp":"...","probe":"inlet"}
 */
export class Logger {
  /** The `@module` of every record. */
  readonly module: string;
  /** The least severe level written; "off" writes nothing. */
  readonly level: Level | "off";
  private readonly fields: Record<string, unknown>;
  private readonly write: (line: string) => void;

  constructor(
    options: {
      module?: string;
      level?: Level | "off";
      fields?: Record<string, unknown>;
      write?: (line: string) => void;
    } = {},
  ) {
    this.module = options.module ?? defaultModule();
    this.level = options.level ?? defaultLevel();
    if (this.level !== "off" && !LEVELS.includes(this.level)) {
      throw new Error(`unknown log level ${JSON.stringify(this.level)}`);
    }
    this.fields = { ...(options.fields ?? {}) };
    this.write =
      options.write ??
      ((line: string) => {
        try {
          writeSync(2, line);
        } catch {
          // a closed stderr must not break the adapter
        }
      });
  }

  /** Whether a record at `level` would be written. */
  enabled(level: Level): boolean {
    return this.level !== "off" && rank(level) >= rank(this.level);
  }

  /** Writes one record at `level` with `fields`. */
  log(level: Level, message: string, fields: Record<string, unknown> = {}): void {
    if (!this.enabled(level)) {
      return;
    }
    const rec: Record<string, unknown> = { "@level": level, "@message": message };
    if (this.module) {
      rec["@module"] = this.module;
    }
    rec["@timestamp"] = timestamp();
    for (const [k, v] of Object.entries({ ...this.fields, ...fields })) {
      if (!k.startsWith("@")) {
        rec[k] = plain(v);
      }
    }
    let line: string;
    try {
      line = JSON.stringify(rec, (_k, v) => plain(v));
    } catch {
      line = JSON.stringify({ "@level": level, "@message": message, "@module": this.module, "@timestamp": rec["@timestamp"] });
    }
    this.write(line + "\n");
  }

  /** Logs at trace level. */
  trace(message: string, fields?: Record<string, unknown>): void {
    this.log("trace", message, fields);
  }
  /** Logs at debug level. */
  debug(message: string, fields?: Record<string, unknown>): void {
    this.log("debug", message, fields);
  }
  /** Logs at info level. */
  info(message: string, fields?: Record<string, unknown>): void {
    this.log("info", message, fields);
  }
  /** Logs at warn level. */
  warn(message: string, fields?: Record<string, unknown>): void {
    this.log("warn", message, fields);
  }
  /** Logs at error level. */
  error(message: string, fields?: Record<string, unknown>): void {
    this.log("error", message, fields);
  }

  /** A logger whose module is this one's plus "." + `name`. */
  named(name: string): Logger {
    return new Logger({
      module: this.module ? `${this.module}.${name}` : name,
      level: this.level,
      fields: this.fields,
      write: this.write,
    });
  }

  /** A logger adding `fields` to every record. */
  with(fields: Record<string, unknown>): Logger {
    return new Logger({ module: this.module, level: this.level, fields: { ...this.fields, ...fields }, write: this.write });
  }
}
