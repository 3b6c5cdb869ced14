// A test adapter exercising what the echo example does not: configuration,
// onInitialize, thrown errors, a stubborn handler, stray output and logs.
import { execSync } from "node:child_process";
import { writeSync } from "node:fs";

import { Adapter, CallError, run, Service, t, type Infer } from "../src/index.js";

const Config = t.object({ greeting: t.string().default("hello"), refuse: t.boolean().default(false), limit: t.uint64().default(0) });

const svc = new Service("test.fixture", 1);
const adapter = new Adapter<Infer<typeof Config>>({
  services: [svc],
  configuration: Config,
  onInitialize: (c) => {
    if (c.refuse) {
      throw new CallError("denied", "refused by configuration");
    }
  },
});

svc.method("test.fixture.greet", (p: { name: string }) => ({ text: `${adapter.config!.greeting}, ${p.name}` }));
svc.method("test.fixture.crash", () => {
  throw new TypeError("boom");
});
svc.method("test.fixture.bigint", () => ({ n: 2n ** 64n - 1n }));
svc.method("test.fixture.config", () => adapter.config);
svc.method("test.fixture.nan", () => ({ n: NaN }));
svc.method("test.fixture.untyped", (p: Record<string, unknown>) => ({ types: Object.values(p).map((v) => typeof v) }));
svc.method("test.fixture.stubborn", async (p: { ms: number }, ctx) => {
  await new Promise((r) => setTimeout(r, p.ms));
  return { aborted: ctx.signal.aborted };
});
svc.method("test.fixture.forever", () => new Promise(() => {}));
svc.method("test.fixture.print", () => {
  console.log("stray console.log");
  writeSync(1, "stray fd write\n");
  execSync("echo stray child output", { stdio: "inherit" });
  return { printed: true };
});
svc.method("test.fixture.log", (_p, ctx) => {
  ctx.logger.info("logged", { n: 1 });
  return {};
});

run(adapter);
