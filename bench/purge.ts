import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { seedWorkspace } from "../src/seed/seed.js";
import { openConfiguredStore } from "../src/store/open-store.js";
import type { PostgresServer } from "../test/support/postgres.js";
import { httpLoad, type LoadPlan, type LoadResult, quickTickMs } from "./support/load.js";
import { benchPostgres } from "./support/postgres.js";
import {
  bootstrapAccount,
  type RunningProcess,
  repoRoot,
  startFlowlog,
  unlimitedPlanLimits,
} from "./support/processes.js";
import { type PurgeTarget, purgeFinished, purgeStarted } from "./support/purge-runner.js";
import {
  type Bench,
  type BenchOptions,
  type BenchStoreKind,
  ms,
  perSecond,
  ratio,
  type Table,
} from "./support/report.js";
import { largeSeedBatch } from "./support/store.js";

const dayMs = 86_400_000;

interface Plan {
  /** Entries past the window, spread over the 30 days before it. */
  expired: number;
  /** Entries within it, spread over its 7 days: what the REST list reads meanwhile. */
  kept: number;
  /** The REST list's load; its seconds are cut to the purge's when the purge is shorter. */
  load: LoadPlan;
}

const plans: Record<"quick" | "full", Plan> = {
  quick: {
    // Still a purge of about 0.4 s alone on PostgreSQL on a quiet machine, which the loaded one (0.1 s of
    // warm-up and at least 0.25 s) must outlast.
    expired: 6_000,
    kept: 1_000,
    load: { connections: 10, seconds: 1, warmupSeconds: 0.1, tickMs: quickTickMs },
  },
  full: { expired: 1_000_000, kept: 100_000, load: { connections: 10, seconds: 30, warmupSeconds: 2 } },
};

/** One store with its expired and kept entries seeded, which each measurement runs on a copy of. */
interface SeededStore {
  name: string;
  target: PurgeTarget;
  /** The environment of `flowlog serve` and `flowlog bootstrap` on it. */
  env: Record<string, string>;
  key: string;
  /** A copy of the seeded store, for one measurement; `drop` deletes it. */
  copy(): Promise<{ target: PurgeTarget; drop(): Promise<void> }>;
  dispose(): Promise<void>;
}

/**
 * Issue 52's purge goal, on SQLite and on PostgreSQL: expired entries removed through the store's
 * batched deletion (D41's purge, `deleteInBatches`) at >= 0.5x the rate of a bare batched DELETE of the
 * same rows in transactions of the same size; and, while the purge runs, the REST list's p99 within 1.5x
 * of its p99 with no purge running. Each deletion runs in a process of its own (support/purge-runner.ts),
 * as the purge runs in `flowlog worker`, on a copy of the same seeded store.
 */
export const purgeBench: Bench = {
  name: "purge",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    const rows: (string | number)[][] = [];
    const server = await benchPostgres(options);
    try {
      // `--sizes=` gives the expired entries' counts, a row per store for each.
      for (const expired of options.sizes ?? [plan.expired]) {
        const sized = { ...plan, expired };
        const measures = (store: BenchStoreKind) => options.stores?.includes(store) ?? true;
        if (measures("sqlite")) rows.push(await measureSeeded(() => seededSqlite(sized), sized));
        if (measures("postgres")) rows.push(await measureSeeded(() => seededPostgres(server, sized), sized));
      }
    } finally {
      await server.stop();
    }
    return [purgeTable(plan, rows)];
  },
};

async function measureSeeded(seed: () => Promise<SeededStore>, plan: Plan): Promise<(string | number)[]> {
  const seeded = await seed();
  try {
    return await measureStore(seeded, plan);
  } finally {
    await seeded.dispose();
  }
}

async function measureStore(seeded: SeededStore, plan: Plan): Promise<(string | number)[]> {
  const once = async (how: "store" | "bare") => {
    const copy = await seeded.copy();
    try {
      return await startPurge(how, copy.target).finished;
    } finally {
      await copy.drop();
    }
  };
  const bare = await once("bare");
  const alone = await once("store");
  if (alone.entries !== bare.entries || alone.entries !== plan.expired) {
    throw new Error(`${seeded.name}: the purge deleted ${alone.entries}, the bare DELETE ${bare.entries}`);
  }
  const underLoad = await listUnderPurge(seeded, plan, alone.seconds);
  const rate = (run: PurgeResult) => run.entries / run.seconds;
  const { quiet, during } = underLoad;
  return [
    seeded.name,
    plan.expired.toLocaleString("en-US"),
    perSecond(rate(bare)),
    perSecond(rate(alone)),
    ratio(rate(alone) / rate(bare)),
    ms(quiet.latency.p99),
    ms(during.latency.p99),
    ratio(during.latency.p99 / quiet.latency.p99),
    ratio(during.requestsPerSecond / quiet.requestsPerSecond),
    perSecond(rate(underLoad.purge)),
  ];
}

/**
 * The REST list (`GET /api/v1/logs?limit=100`, keep-alive connections in closed loops, as the gateway
 * benches load it) on one `flowlog serve`, first with no purge, then with the purge running beside it on
 * the seeded store itself. The load, its warm-up included, lasts at most 0.7x of the purge's time alone,
 * so it ends before the purge, which the load slows.
 */
async function listUnderPurge(seeded: SeededStore, plan: Plan, purgeSeconds: number) {
  const seconds = Math.max(0.25, Math.min(plan.load.seconds, 0.7 * purgeSeconds - plan.load.warmupSeconds));
  const load = { ...plan.load, seconds };
  let serve: RunningProcess | undefined;
  try {
    serve = await startFlowlog(["serve"], {
      env: { ...seeded.env, PORT: "0" },
      ready: /flowlog API at http:\/\/localhost:(\d+)/,
    });
    const url = `http://127.0.0.1:${serve.ready[1]}/api/v1/logs?workspaceId=${seeded.target.workspaceId}&limit=100`;
    const list = { url, headers: { "x-api-key": seeded.key } };
    const quiet = await httpLoad(list, load);
    const purge = startPurge("store", seeded.target);
    await purge.started;
    const during = await httpLoad(list, load);
    const purged = await purge.finished;
    checkLoad(seeded.name, [quiet, during]);
    if (purged.entries !== plan.expired) throw new Error(`${seeded.name}: ${purged.entries} entries purged`);
    if (purged.seconds < load.warmupSeconds + load.seconds) {
      throw new Error(`${seeded.name}: the purge ended before the load it was measured under`);
    }
    return { quiet, during, purge: purged };
  } finally {
    await serve?.stop();
  }
}

function checkLoad(name: string, results: LoadResult[]): void {
  const failures = results.reduce((sum, result) => sum + result.failures, 0);
  if (failures > 0) throw new Error(`${name}: ${failures} failed calls under load`);
}

interface PurgeResult {
  entries: number;
  seconds: number;
}

/** Starts support/purge-runner.ts; `started` once its first batch is about to run. */
function startPurge(
  how: "store" | "bare",
  target: PurgeTarget,
): { started: Promise<void>; finished: Promise<PurgeResult> } {
  const runner = path.join(repoRoot, "bench/support/purge-runner.ts");
  const child = spawn(process.execPath, ["--import", "tsx", runner, how, JSON.stringify(target)], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  let markStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes(purgeStarted)) markStarted();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const finished = new Promise<PurgeResult>((resolve, reject) => {
    child.once("exit", (code) => {
      const line = output.split("\n").find((text) => text.startsWith(purgeFinished));
      if (code !== 0 || !line) reject(new Error(`purge-runner ${how} failed (${code}):\n${output}`));
      else resolve(JSON.parse(line.slice(purgeFinished.length)) as PurgeResult);
    });
  });
  // A runner that dies before its first batch must not leave its parent waiting for it.
  return { started: Promise.race([started, finished.then(() => undefined)]), finished };
}

/** An enterprise account from `flowlog bootstrap` in the store `env` names, seeded in-process. */
async function bootstrapAndSeed(
  env: StoreEnv & { FLOWLOG_DATABASE_URL?: string },
  plan: Plan,
): Promise<{ workspaceId: string; key: string; cutoff: number }> {
  const { workspaceId, key } = await bootstrapAccount(env);
  const now = Date.now();
  const cutoff = now - 7 * dayMs;
  const store = await openConfiguredStore({
    dataDir: env.FLOWLOG_DATA_DIR,
    databaseUrl: env.FLOWLOG_DATABASE_URL,
    masterKey: env.FLOWLOG_MASTER_KEY,
  });
  try {
    // The expired entries end half an hour before the cutoff (the generator's room for a run to end).
    const batchSize = largeSeedBatch;
    await seedWorkspace(store, {
      workspaceId,
      executions: plan.expired,
      seed: "expired",
      now: cutoff,
      batchSize,
    });
    await seedWorkspace(store, { workspaceId, executions: plan.kept, days: 7, seed: "kept", now, batchSize });
  } finally {
    await store.close();
  }
  return { workspaceId, key, cutoff };
}

type StoreEnv = ReturnType<typeof baseEnv>;

function baseEnv(dataDir: string) {
  return {
    FLOWLOG_DATA_DIR: dataDir,
    FLOWLOG_MASTER_KEY: randomBytes(32).toString("base64"),
    FLOWLOG_PLAN_LIMITS: unlimitedPlanLimits,
  };
}

/** A SQLite data dir; a copy is the directory copied whole, the store closed (its WAL checkpointed). */
async function seededSqlite(plan: Plan): Promise<SeededStore> {
  const temp = mkdtempSync(path.join(tmpdir(), "flowlog-bench-purge-"));
  const dataDir = path.join(temp, "seeded");
  const env = baseEnv(dataDir);
  const { workspaceId, key, cutoff } = await bootstrapAndSeed(env, plan);
  const target = (dir: string): PurgeTarget => ({
    dataDir: dir,
    masterKey: env.FLOWLOG_MASTER_KEY,
    workspaceId,
    cutoff,
  });
  let copies = 0;
  return {
    name: "SQLite",
    target: target(dataDir),
    env,
    key,
    async copy() {
      const dir = path.join(temp, `copy-${++copies}`);
      cpSync(dataDir, dir, { recursive: true });
      return {
        target: target(dir),
        drop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
    dispose: async () => rmSync(temp, { recursive: true, force: true }),
  };
}

/** A PostgreSQL database; a copy is a database made from it as a template, nobody connected to it. */
async function seededPostgres(server: PostgresServer, plan: Plan): Promise<SeededStore> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-purge-pg-"));
  const databaseUrl = await server.createDatabase();
  const env = { ...baseEnv(dataDir), FLOWLOG_DATABASE_URL: databaseUrl };
  const { workspaceId, key, cutoff } = await bootstrapAndSeed(env, plan);
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  const source = new URL(databaseUrl).pathname.slice(1);
  const target = (url: string): PurgeTarget => ({
    dataDir,
    databaseUrl: url,
    masterKey: env.FLOWLOG_MASTER_KEY,
    workspaceId,
    cutoff,
  });
  let copies = 0;
  return {
    name: "PostgreSQL",
    target: target(databaseUrl),
    env,
    key,
    async copy() {
      const name = `${source}_copy_${++copies}`;
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${source}`);
      const url = new URL(databaseUrl);
      url.pathname = `/${name}`;
      return {
        target: target(url.toString()),
        drop: async () => {
          await admin.query(`DROP DATABASE ${name}`);
        },
      };
    },
    dispose: async () => {
      await admin.query(`DROP DATABASE ${source}`);
      await admin.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function purgeTable(plan: Plan, rows: (string | number)[][]): Table {
  return {
    title:
      `purge: expired entries beside ${plan.kept.toLocaleString("en-US")} kept, in transactions of 200; ` +
      `REST list p99 over ${plan.load.connections} keep-alive connections`,
    columns: [
      "store",
      "expired",
      "bare DELETE/s",
      "purge/s",
      "purge/bare",
      "list p99 ms",
      "list p99 ms, purging",
      "p99 purging/not",
      "list req/s purging/not",
      "purge/s under load",
    ],
    rows,
    note:
      "Goals (issue 52): purge/bare >= 0.5x; p99 purging/not <= 1.5x. Each deletion runs in a process of " +
      "its own on a copy of the same seeded store; the load, warm-up included, lasts at most 0.7x of the purge's time alone.",
  };
}
