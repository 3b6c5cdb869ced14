/**
 * Method descriptors: what `adapterctl contract gen -lang typescript` writes for each
 * method of a Go contract, and how a handler is registered with one, its params and
 * result typed and both checked at run time with the contract's rules.
 *
 * ```ts
 * import { Adapter, implement, run, Service } from "@adapterkit/sdk";
 * import { DEVICE_ID, DEVICE_VERSION, ReadMethod } from "./device.js"; // generated
 *
 * const svc = new Service(DEVICE_ID, DEVICE_VERSION);
 * implement(svc, ReadMethod, async (p) => ({ probe: p.probe, celsius: 21.5 }));
 * run(new Adapter({ services: [svc] }));
 * ```
 *
 * @module
 */
import { CallError } from "./errors.js";
import { stringifyJSON, type Raw } from "./json.js";
import { ParamsError, Schema } from "./params.js";
import { type Handler, Service } from "./server.js";
import { RawJSON } from "./wire.js";

/** A method of a contract: its full name and the schemas of its params and result. */
export interface Method<P, R> {
  readonly name: string;
  readonly params: Schema<P>;
  readonly result: Schema<R>;
}

/** A method descriptor (generated code calls it). */
export function method<P, R>(name: string, params: Schema<P>, result: Schema<R>): Method<P, R> {
  return { name, params, result };
}

class Lazy<T> extends Schema<T> {
  private got?: Schema<T>;
  constructor(
    private readonly get: () => Schema<T>,
    readonly expected: string,
  ) {
    super();
  }
  private get inner(): Schema<T> {
    return (this.got ??= this.get());
  }
  decode(v: Raw, path: string): T {
    return this.inner.decode(v, path);
  }
  takesNull(): boolean {
    return this.inner.takesNull();
  }
  absent(path: string): T {
    return this.inner.absent(path);
  }
}

/** A schema defined later, or one that contains itself: `lazy(() => Node, "an
 * object")`; `expected` is what a value of it is in JSON, in refusals ("an object",
 * "an array", "a string"), known before the schema is. */
export function lazy<T>(get: () => Schema<T>, expected: string): Schema<T> {
  return new Lazy(get, expected);
}

/**
 * Registers `handler` for the method `m` on `svc`: the params are checked with
 * m.params before the handler runs (a refusal answers `invalid`), and the result is
 * checked with m.result before it is sent (a result that does not fit the contract
 * answers `failed`, naming the member, instead of reaching the host).
 */
export function implement<P, R>(svc: Service, m: Method<P, R>, handler: Handler<P, R>): Service {
  return svc.method<P, RawJSON>(
    m.name,
    async (params, ctx) => {
      const value = await handler(params, ctx);
      const text = stringifyJSON(value);
      try {
        m.result.parseText(text);
      } catch (e) {
        if (e instanceof ParamsError) {
          throw new CallError("failed", "result does not fit the contract: " + e.message);
        }
        throw e;
      }
      return new RawJSON(text);
    },
    { params: m.params },
  );
}
