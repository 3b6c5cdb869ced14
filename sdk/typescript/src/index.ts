/**
 * adapterkit for TypeScript: write adapters for the Adapter process protocol v1.
 *
 * ```ts
 * import { Adapter, Service, run } from "@adapterkit/sdk";
 *
 * const svc = new Service("example.hello", 1);
 * svc.method("example.hello.greet", async (p: { name?: string }) => ({ greeting: `hello, ${p.name ?? "world"}` }));
 * run(new Adapter({ services: [svc] }));
 * ```
 *
 * The SDK validates the catalog before anything is read, answers initialize, refuses
 * requests before it, runs every request concurrently with an AbortSignal that the
 * host's cancel and the end of stdin abort, answers a 33rd request in flight busy, maps
 * errors to the eight codes, answers unknown methods unavailable, ends the connection on
 * host faults, exits within 2 s of the end of stdin, and protects stdout.
 *
 * @module
 */
export { validateCatalog, type Catalog, type CatalogService } from "./catalog.js";
export { implement, lazy, method, type Method } from "./contract.js";
export {
  AdapterDefinitionError,
  CallError,
  CanceledError,
  CODES,
  capMessage,
  MAX_MESSAGE_BYTES,
  normalizeCode,
  ProtocolViolation,
  type Code,
} from "./errors.js";
export { JSONNumber, parseJSON, stringifyJSON, type JSONValue } from "./json.js";
export { ParamsError, Schema, t, type Infer, type ObjectOf, type Shape } from "./params.js";
export { defaultLevel, defaultModule, LEVEL_ENV, LEVELS, Logger, timestamp, type Level } from "./log.js";
export { protectStdout, run } from "./main.js";
export {
  Adapter,
  serve,
  Service,
  type AdapterOptions,
  type Handler,
  type MethodOptions,
  type RequestContext,
} from "./server.js";
export { INITIALIZE, MAX_FRAME, MAX_ID, MAX_IN_FLIGHT, PROTOCOL_VERSION, RawJSON } from "./wire.js";
