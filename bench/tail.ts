import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { generateExecutions } from "../src/seed/generate.js";
import { Random } from "../src/seed/random.js";
import { openPostgresStore } from "../src/store/postgres/store.js";
import type { ExecutionRecord } from "../src/store/records.js";
import { openStore, type Store } from "../src/store/store.js";
import { newId } from "../src/util/ids.js";
import { type EventStreamClient, openEventStream } from "../test/support/event-stream.js";
import { benchPostgres } from "./support/postgres.js";
import { bootstrapAccount, flowlogCli, type RunningProcess, startFlowlog } from "./support/processes.js";
import { type Bench, type BenchOptions, ms, type Table } from "./support/report.js";
import { distribution } from "./support/sample.js";

/**
 * Idle streams, entries timed, how long the idle server is watched, and how long the streams settle once
 * opened before it is.
 */
const plans = {
  quick: { streams: 100, writes: 20, idleSeconds: 0.5, settleMs: 0 },
  full: { streams: 1_000, writes: 500, idleSeconds: 10, settleMs: 1_000 },
};

/** Room for the bench's streams, and buckets it never empties (every stream still takes its token). */
const unlimited = { requestsPerMinute: 1_000_000_000, maxBurst: 1_000_000_000 };
const planLimits = JSON.stringify({ enterprise: { api: unlimited, openTails: 5_000 } });
/** Each idle stream is an HTTP/1.1 connection of its own, as a browser's: room for them beyond the default 1,000. */
const connections = JSON.stringify({ maxConnections: 5_000 });

/** How often an entry is written while the latency is timed: a steady trickle, not a burst. */
const writeEveryMs = 20;

/**
 * D44's tail (issue 53) against `flowlog serve` in a process of its own, on each store: how long an entry
 * takes from its write (the call that commits it, made from another process's store) to its event on an
 * SSE tail, with the idle streams open; and what those idle streams cost the server, RSS and CPU while
 * nothing is written, against the same server before they opened. Goals (full mode): p50 ≤ 50 ms,
 * p99 ≤ 250 ms; 1,000 idle streams < 150 MB of RSS and < 5 % of a core.
 */
export const tailBench: Bench = {
  name: "tail",
  async run(options: BenchOptions) {
    const plan = options.quick ? plans.quick : plans.full;
    const tables: Table[] = [];
    tables.push(await measure("SQLite", plan, sqliteSetup()));
    const server = await benchPostgres(options);
    try {
      tables.push(await measure("PostgreSQL", plan, await postgresSetup(await server.createDatabase())));
    } finally {
      await server.stop();
    }
    return tables;
  },
};

interface Setup {
  env: NodeJS.ProcessEnv;
  /** The bench's own store on the same database: the writer, as another process. */
  openWriter(): Promise<Store>;
  dispose(): void;
}

function sqliteSetup(): Setup {
  const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-tail-"));
  return {
    env: { FLOWLOG_DATA_DIR: dataDir, FLOWLOG_PLAN_LIMITS: planLimits, FLOWLOG_CONNECTIONS: connections },
    openWriter: async () => openStore({ dataDir }),
    dispose: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

async function postgresSetup(url: string): Promise<Setup> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-tail-pg-"));
  const masterKey = randomBytes(32);
  return {
    env: {
      FLOWLOG_DATA_DIR: dataDir,
      FLOWLOG_DATABASE_URL: url,
      FLOWLOG_MASTER_KEY: masterKey.toString("base64"),
      FLOWLOG_PLAN_LIMITS: planLimits,
      FLOWLOG_CONNECTIONS: connections,
    },
    openWriter: () => openPostgresStore(url, masterKey),
    dispose: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

async function measure(storeName: string, plan: typeof plans.full, setup: Setup): Promise<Table> {
  const streams: EventStreamClient[] = [];
  let serve: RunningProcess | undefined;
  let writer: Store | undefined;
  try {
    const { workspaceId, key } = await bootstrapAccount(setup.env);
    await flowlogCli(
      ["seed", "--workspace", workspaceId, "--executions", "10", "--seed", "bench"],
      setup.env,
    );
    writer = await setup.openWriter();
    const records = await executionsFor(writer, workspaceId, plan.writes);
    serve = await startFlowlog(["serve"], {
      env: { ...setup.env, PORT: "0" },
      ready: /flowlog API at http:\/\/localhost:(\d+)/,
    });
    const url = `http://127.0.0.1:${serve.ready[1]}/api/v1/logs:tail?workspaceId=${workspaceId}`;
    const headers = { "x-api-key": key };
    const before = await idleCost(serve.pid, plan.idleSeconds);

    // Idle: a filter none of the writes match (a workflow of no entry), so they cost what an idle
    // stream costs while the timed one receives every entry.
    const idleUrl = `${url}&workflowIds=wf_idle`;
    for (let i = 0; i < plan.streams; i++) {
      const stream = await openEventStream(idleUrl, headers);
      if (stream.status !== 200) throw new Error(`stream ${i} refused: ${stream.status} ${stream.body}`);
      await stream.next();
      // Idle streams are read (as a client would) but their events are not kept.
      stream.received.length = 0;
      streams.push(stream);
    }
    await sleep(plan.settleMs);
    const idle = await idleCost(serve.pid, plan.idleSeconds);

    const timed = await openEventStream(url, headers);
    streams.push(timed);
    await timed.next();
    const latencies = await writeToReceive(writer, timed, records);
    for (const stream of streams) stream.received.length = 0;
    const latency = distribution(latencies);
    return {
      title:
        `tail on ${storeName}: write → SSE event with ${plan.streams.toLocaleString("en-US")} idle streams ` +
        `of the same workspace open (${latency.samples} entries, one each ${writeEveryMs} ms); idle cost over ${plan.idleSeconds} s`,
      columns: [
        "p50 ms",
        "p99 ms",
        "max ms",
        "RSS before MB",
        "RSS with streams MB",
        "CPU idle before",
        "CPU idle with streams",
      ],
      rows: [
        [
          ms(latency.p50),
          ms(latency.p99),
          ms(latency.max),
          mb(before.rssBytes),
          mb(idle.rssBytes),
          percent(before.coreShare),
          percent(idle.coreShare),
        ],
      ],
      note:
        "Latency runs from the writer's call (its commit included) to the event's arrival. CPU is the " +
        "serve process's share of one core while nothing is written.",
    };
  } finally {
    for (const stream of streams) stream.close();
    await serve?.stop();
    await writer?.close();
    setup.dispose();
  }
}

/** Executions of the seeded workflows, new ids each, to write one at a time. */
async function executionsFor(store: Store, workspaceId: string, count: number): Promise<ExecutionRecord[]> {
  const workflows = await store.workflows.listWorkflows(workspaceId);
  const request = { workflows, count, days: 1, now: Date.now(), billedUserId: null };
  const records: ExecutionRecord[] = [];
  for await (const record of generateExecutions(new Random("tail"), request)) {
    records.push({ ...record, entry: { ...record.entry, id: newId("log"), executionId: newId("ex") } });
  }
  return records;
}

async function writeToReceive(
  writer: Store,
  stream: EventStreamClient,
  records: ExecutionRecord[],
): Promise<number[]> {
  const writtenAt = new Map<string, number>();
  const latencies: number[] = [];
  const receiving = (async () => {
    while (latencies.length < records.length) {
      const event = await stream.next(30_000);
      const received = performance.now();
      if (!event.data) continue;
      const id = (JSON.parse(event.data) as { entry: { id: string } }).entry.id;
      const written = writtenAt.get(id);
      if (written !== undefined) latencies.push(received - written);
    }
  })();
  for (const record of records) {
    writtenAt.set(record.entry.id, performance.now());
    await writer.logs.insertExecution(record);
    await sleep(writeEveryMs);
  }
  await receiving;
  return latencies;
}

/** The process's RSS, and its CPU over `seconds` as a share of one core, from /proc. */
async function idleCost(pid: number, seconds: number): Promise<{ rssBytes: number; coreShare: number }> {
  const ticks = () => {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    // utime and stime: the 14th and 15th fields, the 12th and 13th after the command's name.
    return Number(fields[11]) + Number(fields[12]);
  };
  const start = ticks();
  const started = performance.now();
  await sleep(seconds * 1_000);
  const used = (ticks() - start) / 100;
  const elapsed = (performance.now() - started) / 1_000;
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return { rssBytes: Number(rss) * 1024, coreShare: used / elapsed };
}

function mb(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(0);
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)} %`;
}
