import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { archiveBench } from "./archive.js";
import { bulkRetryBench } from "./bulk-retry.js";
import { clusterBench } from "./cluster.js";
import { consoleBench } from "./console.js";
import { deliveryBench } from "./delivery.js";
import { executionBench } from "./execution.js";
import { executionTracingBench } from "./execution-tracing.js";
import { exportBench } from "./export.js";
import { fairnessBench } from "./fairness.js";
import { gatewayBench } from "./gateway.js";
import { gatewayPgBench } from "./gateway-pg.js";
import { gatewayTracingBench } from "./gateway-tracing.js";
import { gcPromotionBench } from "./gc-promotion.js";
import { ingestBench } from "./ingest.js";
import { ingestPgBench } from "./ingest-pg.js";
import { listQueryBench } from "./list-query.js";
import { listQueryPgBench } from "./list-query-pg.js";
import { logStatsBench } from "./log-stats.js";
import { outageBench } from "./outage.js";
import { partitionsPgBench } from "./partitions-pg.js";
import { purgeBench } from "./purge.js";
import { rateLimitBench } from "./rate-limit.js";
import { resumeBench } from "./resume.js";
import { searchBench } from "./search.js";
import { stopShared } from "./support/quick-run.js";
import {
  type Bench,
  type BenchStoreKind,
  benchStoreKinds,
  formatTable,
  type Gate,
} from "./support/report.js";
import { tailBench } from "./tail.js";
import { tenantReadsBench } from "./tenant-reads.js";

/** Every bench, in the order `npm run bench` runs them. */
const benches: Bench[] = [
  listQueryBench,
  listQueryPgBench,
  purgeBench,
  partitionsPgBench,
  logStatsBench,
  searchBench,
  tenantReadsBench,
  gatewayBench,
  gatewayTracingBench,
  gcPromotionBench,
  gatewayPgBench,
  ingestBench,
  ingestPgBench,
  archiveBench,
  tailBench,
  exportBench,
  executionBench,
  executionTracingBench,
  bulkRetryBench,
  resumeBench,
  fairnessBench,
  deliveryBench,
  outageBench,
  rateLimitBench,
  clusterBench,
  consoleBench,
];
const resultsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "results");

/**
 * `npm run bench [-- [--quick] [--sizes=…] [--stores=…] [--keep-stores=DIR] [name...]]`: runs the named
 * benches (all by default), prints and saves each.
 */
async function main(args: string[]): Promise<void> {
  const quick = args.includes("--quick");
  const sizes = sizesOption(args);
  const stores = storesOption(args);
  const keepStores = keepStoresOption(args);
  const names = args.filter((arg) => !arg.startsWith("--"));
  const unknown = names.filter((name) => !benches.some((b) => b.name === name));
  if (unknown.length > 0) {
    throw new Error(`unknown bench ${unknown.join(", ")}; known: ${benches.map((b) => b.name).join(", ")}`);
  }
  const selected = names.length > 0 ? benches.filter((b) => names.includes(b.name)) : benches;
  const machine = {
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? "unknown",
    node: process.version,
  };
  console.log(
    `machine: ${machine.cores} cores, ${machine.cpu}, Node ${machine.node}${quick ? ", --quick" : ""}\n`,
  );
  mkdirSync(resultsDir, { recursive: true });
  const missed: (Gate & { bench: string })[] = [];
  try {
    for (const bench of selected) {
      const started = performance.now();
      const tables = await bench.run({
        quick,
        ...(sizes && { sizes }),
        ...(stores && { stores }),
        ...(keepStores && { keepStores }),
      });
      const seconds = (performance.now() - started) / 1000;
      for (const table of tables) console.log(`${formatTable(table)}\n`);
      for (const gate of tables.flatMap((table) => table.gates ?? []))
        if (!gate.met) missed.push({ bench: bench.name, ...gate });
      console.log(`(${bench.name}: ${seconds.toFixed(1)} s)\n`);
      const result = { bench: bench.name, quick, machine, date: new Date().toISOString(), seconds, tables };
      writeFileSync(path.join(resultsDir, `${bench.name}.json`), `${JSON.stringify(result, null, 2)}\n`);
    }
  } finally {
    await stopShared();
  }
  if (missed.length > 0) {
    for (const { bench, goal, figure } of missed) console.error(`${bench} missed "${goal}": ${figure}`);
    process.exitCode = 1;
  }
}

/** `--sizes=1000000,10000000`, for the benches that seed stores of several sizes (a 10M store takes hours). */
function sizesOption(args: string[]): number[] | undefined {
  const option = args.find((arg) => arg.startsWith("--sizes="));
  if (!option) return undefined;
  const sizes = option.slice("--sizes=".length).split(",").map(Number);
  if (sizes.some((size) => !Number.isInteger(size) || size < 1)) {
    throw new Error(`--sizes takes whole numbers of entries separated by commas, not ${option}`);
  }
  return sizes;
}

/** `--stores=postgres`, for the benches with a row per store (purge): only the stores named. */
function storesOption(args: string[]): BenchStoreKind[] | undefined {
  const option = args.find((arg) => arg.startsWith("--stores="));
  if (!option) return undefined;
  const stores = option.slice("--stores=".length).split(",");
  const unknown = stores.filter((store) => !(benchStoreKinds as readonly string[]).includes(store));
  if (unknown.length > 0) {
    throw new Error(`--stores takes ${benchStoreKinds.join(" and/or ")} separated by commas, not ${option}`);
  }
  return stores as BenchStoreKind[];
}

/** `--keep-stores=DIR`: where list-query keeps its seeded stores between runs. */
function keepStoresOption(args: string[]): string | undefined {
  const option = args.find((arg) => arg.startsWith("--keep-stores="));
  if (!option) return undefined;
  const dir = option.slice("--keep-stores=".length);
  if (dir === "") throw new Error("--keep-stores takes a directory: --keep-stores=/var/tmp/flowlog-bench");
  return path.resolve(dir);
}

await main(process.argv.slice(2));
