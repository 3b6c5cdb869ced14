// A test adapter exercising what the echo example does not: configuration,
// onInitialize, thrown errors, a stubborn handler, stray output and logs.
import { execSync } from "node:child_process";
import { writeSync } from "node:fs";

import { Adapter, CallError, run, Service } from "../src/index.js";

interface Config {
  greeting: string;
  refuse: boolean;
}

const svc = new Service("test.fixture", 1);
const adapter = new Adapter<Config>({
  services: [svc],
  configuration: (v) => {
    for (const k of Object.keys(v)) {
      if (k !== "greeting" && k !== "refuse") {
        throw new Error(`field "${k}": unknown field`);
      }
    }
    return { greeting: typeof v.greeting === "string" ? v.greeting : "hello", refuse: v.refuse === true };
  },
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
svc.method("test.fixture.bigint", () => ({ n: 1n }));
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
