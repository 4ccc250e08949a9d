import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { ensureBuilt } from "../scripts/build.mjs";
import { ensureCodegenTools } from "../scripts/generate.js";
import { resolveTemporalBinaries } from "../src/cluster/binaries.js";
import { resolveNginx } from "../src/cluster/nginx.js";
import { loadConfig } from "../src/config/config.js";
import { ensureTemporal } from "../src/temporal/dev/ensure-temporal.js";
import { resolvePostgresBinaries } from "../src/tools/postgres-binaries.js";
import { freeListeningPort } from "../src/util/free-port.js";
import { prepareConsoleTests } from "./support/browser.js";
import { resolveGrpcHealthProbe } from "./support/grpc-health-probe.js";
import { resolveGrpcurl } from "./support/grpcurl.js";
import { resolveJaeger } from "./support/jaeger.js";
import { ensurePythonVenvs } from "./support/python.js";
import { runTemporaryDirectory, shareForRun } from "./support/run-resources.js";
import { resolveMinio } from "./support/s3-server.js";
import { ensureTestWorkflowBundle } from "./support/test-workflow-bundle.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** host:port of the one Temporal frontend shared by the whole run. */
    temporalAddress: string;
    temporalNamespace: string;
  }
}

/**
 * One Temporal dev server for the whole run (issue 2, item 8), headless on free ports so a developer's
 * `npm start` on 7233/8233 can keep running; TEMPORAL_ADDRESS points the run at an existing one instead.
 * Both projects share it, and the run's temporary directory (support/run-resources.ts).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // First, so that every data dir made after it (servers, test stores, processes) is removed with it.
  const tmp = await runTemporaryDirectory();
  const tools = await shareForRun("tools", prepareTools, async () => {});
  const temporal = await shareForRun("temporal", startTemporal, async ({ server, dataDir }) => {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  });
  project.provide("temporalAddress", temporal.value.server.address);
  project.provide("temporalNamespace", temporal.value.namespace);
  return async () => {
    await temporal.release();
    await tools.release();
    await tmp.release();
  };
}

/** What the test files need installed or built before they start, once a run. */
async function prepareTools(): Promise<void> {
  // Before any test file starts its own PostgreSQL (support/postgres.ts): on a fresh machine the files
  // running side by side would otherwise each try to install it at once.
  await resolvePostgresBinaries();
  // The cluster test's parts (issue 16): a first build or install takes minutes, which no hook allows.
  await resolveTemporalBinaries();
  await resolveNginx();
  // grpcurl (the cluster and polyglot tests' gRPC client): built with `go install`, which on a machine with
  // an empty Go module cache takes longer than a test's own time allows.
  await resolveGrpcurl();
  // grpc-health-probe (issue 55): the health tests' Kubernetes-style probe, built the same way.
  await resolveGrpcHealthProbe();
  // The client packages' generators (D49): test/generated.test.ts regenerates them, and a first install of
  // grpcio-tools and build of the Go plugins takes longer than its time allows.
  await ensureCodegenTools();
  // The Python venvs: installed once here, before two files running side by side (polyglot and clients,
  // polyglot and logs-tail) would make one venv at once and break it.
  ensurePythonVenvs();
  // Jaeger (issue 55, item 5): the tracing test's trace backend; a first build takes minutes.
  await resolveJaeger();
  // MinIO, the S3-compatible store D42's archive tests write to: a first build takes minutes too.
  await resolveMinio();
  // The console's browser tests (issue 17): Chromium's headless shell, and the console built from console/.
  await prepareConsoleTests();
  // The processes tests start with bin/flowlog.js run the compiled build: built once here, before the
  // files running side by side would wait for one another's build.
  await ensureBuilt();
  await ensureTestWorkflowBundle();
}

async function startTemporal() {
  const { temporalAddress, temporalNamespace } = loadConfig();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "flowlog-temporal-"));
  const server = await ensureTemporal({
    address: temporalAddress,
    namespace: temporalNamespace,
    dataDir,
    port: await freeListeningPort(),
    headless: true,
  });
  return { server, dataDir, namespace: temporalNamespace };
}
