// The generation thread runs from the TypeScript sources, as the CLI does (bin/flowlog.js).
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.module);
