/** A service as it appears in the catalog. */
export interface CatalogService {
  id: string;
  version: number;
  methods: string[];
}

/** The initialize result value. */
export interface Catalog {
  protocol: number;
  services: CatalogService[];
}

function dotted(name: unknown): name is string {
  if (typeof name !== "string") {
    return false;
  }
  const parts = name.split(".");
  return parts.length >= 2 && parts.every((p) => p.length > 0);
}

/**
 * Returns why the catalog of `services` is invalid, or undefined when it is valid.
 * Checks R20-R25 with the decisions A9-A11: ids and methods dotted with non-empty
 * segments, nothing starting with "system", versions integers >= 1, non-empty method
 * lists, every method prefixed by its service id and a dot, no service id and no
 * method name twice.
 */
export function validateCatalog(services: readonly CatalogService[]): string | undefined {
  const ids = new Set<string>();
  const methods = new Set<string>();
  for (const s of services) {
    if (typeof s.id === "string" && s.id.startsWith("system")) {
      return `service id ${s.id} starts with system (R21)`; // R21 first, as the Go SDK
    }
    if (!dotted(s.id)) {
      return `service id ${JSON.stringify(s.id)} is not dotted and namespaced (R20)`;
    }
    if (!Number.isInteger(s.version) || s.version < 1) {
      return `service ${s.id}: version ${s.version} is not an integer >= 1 (R22)`;
    }
    if (!Array.isArray(s.methods) || s.methods.length === 0) {
      return `service ${s.id} has no methods (R23)`;
    }
    if (ids.has(s.id)) {
      return `service id ${s.id} is duplicated (R25)`;
    }
    ids.add(s.id);
    for (const m of s.methods) {
      if (typeof m === "string" && m.startsWith("system")) {
        return `method ${m} starts with system (R21)`;
      }
      if (!dotted(m)) {
        return `method ${JSON.stringify(m)} is not dotted and namespaced (R20)`;
      }
      if (!m.startsWith(s.id + ".") || m.length === s.id.length + 1) {
        return `method ${m} is not prefixed by its service id ${s.id} (R24)`;
      }
      if (methods.has(m)) {
        return `method ${m} is duplicated (R25)`;
      }
      methods.add(m);
    }
  }
  return undefined;
}
