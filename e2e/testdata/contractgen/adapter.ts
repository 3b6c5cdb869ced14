// The e2e.contract service (e2e/contractapi) written with the TypeScript SDK and the
// types adapterctl contract gen writes (contractapi.ts): each method returns its params.
import { Adapter, implement, run, Service } from "@adapterkit/sdk";
import * as api from "./contractapi.js";

const svc = new Service(api.E2E_CONTRACT_ID, api.E2E_CONTRACT_VERSION);
implement(svc, api.EverythingMethod, (p) => p);
implement(svc, api.EventMethod, async (p) => p);
implement(svc, api.TreeMethod, (p) => p);
run(new Adapter({ services: [svc] }));
