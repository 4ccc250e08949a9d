import { createHash, randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { gunzipSync } from "node:zlib";
import { Client, Connection } from "@temporalio/client";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LogsService } from "../gen/flowlog/logs/v1/logs_service_pb.js";
import { dayMs } from "../src/limits/retention.js";
import { ProcessMetrics } from "../src/logging/metrics.js";
import { archiveDayFor } from "../src/retention/archive.js";
import type { ExecutionRecord } from "../src/store/records.js";
import type { PurgeRunSummary } from "../src/temporal/activities/retention-activities.js";
import { clientWithKey, restWithKey } from "./support/api-server.js";
import { type RunningWorker, spawnWorkerProcess, startWorker, testDeps } from "./support/engine.js";
import {
  createAccount,
  createWorkflow,
  execution,
  startFlowlog,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { untilTrue } from "./support/until.js";

const temporalServer = { address: inject("temporalAddress"), namespace: inject("temporalNamespace") };
const hour = 60 * 60 * 1000;
/** The injected clock: every window below is judged from it, never from the machine's time. */
const now = Date.parse("2027-03-10T12:30:00.000Z");

const lines: Record<string, unknown>[] = [];
const operatorLog = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
const metrics = new ProcessMetrics("worker");
/** What the archive seam (D42) was asked, and how many of the day's entries were there when it was. */
const archived: { workspaceId: string; day: string; entries: number }[] = [];

let flowlog: TestFlowlog;
let temporal: Client;
let connection: Connection;
let worker: RunningWorker;
let archivingWorker: RunningWorker;
/** A worker with D42's own archive to a folder, as FLOWLOG_ARCHIVE_URL=file:///… gives `flowlog worker`. */
let filingWorker: RunningWorker;
const archiveFolder = mkdtempSync(path.join(tmpdir(), "flowlog-retention-archive-"));

beforeAll(async () => {
  flowlog = await startFlowlog({ clock: () => now });
  const deps = { clock: () => now, logger: operatorLog, metrics };
  worker = await startWorker(temporalServer, testDeps(flowlog.store, deps));
  archivingWorker = await startWorker(
    temporalServer,
    testDeps(flowlog.store, {
      ...deps,
      archiveDay: async (workspaceId, dayStartMs) => {
        const day = { workspaceId, startedFrom: dayStartMs, startedTo: dayStartMs + dayMs - 1 };
        const entries = await flowlog.store.logDeletion.count(day);
        archived.push({ workspaceId, day: new Date(dayStartMs).toISOString(), entries });
      },
    }),
  );
  filingWorker = await startWorker(
    temporalServer,
    testDeps(flowlog.store, {
      ...deps,
      archiveDay: archiveDayFor({ kind: "file", directory: archiveFolder }, flowlog.store, () => now),
    }),
  );
  connection = await Connection.connect({ address: temporalServer.address });
  temporal = new Client({ connection, namespace: temporalServer.namespace });
});
afterAll(async () => {
  await Promise.all([worker?.stop(), archivingWorker?.stop(), filingWorker?.stop()]);
  await connection?.close();
  await flowlog?.close();
});

/** One purge run on a worker's queue, as the Schedule starts it. */
function purge(on: RunningWorker): Promise<PurgeRunSummary> {
  return temporal.workflow.execute("purgeExpiredLogs", {
    taskQueue: on.taskQueue,
    workflowId: `retention-test-${randomUUID()}`,
    args: [],
  });
}

async function logged(account: TestAccount, ...startedAt: number[]): Promise<ExecutionRecord["entry"][]> {
  const workflowId = await createWorkflow(flowlog.store, account.workspaceId, "Nightly report");
  const records = startedAt.map((at) => execution(account, workflowId, { startedAt: at }));
  await flowlog.store.logs.insertExecutions(records);
  return records.map((r) => r.entry);
}

async function listed(account: TestAccount): Promise<string[]> {
  const response = await restWithKey(
    flowlog.server.url,
    account.key,
    "GET",
    `/api/v1/logs?workspaceId=${account.workspaceId}&limit=1000&order=asc`,
  );
  return (response.json as { data: { id: string }[] }).data.map((e) => e.id);
}

const retentionPath = (account: TestAccount) => `/api/v1/workspaces/${account.workspaceId}/log-retention`;
const setRetention = (account: TestAccount, body: object) =>
  restWithKey(flowlog.server.url, account.key, "PUT", retentionPath(account), body);

describe("a workspace's retention window (D41)", () => {
  it("is its plan's unless it chose fewer days; more than the plan's is refused naming the field", async () => {
    const free = await createAccount(flowlog.store, "free");
    const shown = await restWithKey(flowlog.server.url, free.key, "GET", retentionPath(free));
    expect(shown.status).toBe(200);
    expect(shown.json).toMatchObject({ retention: { retentionDays: 7, plan: "free", planRetentionDays: 7 } });
    expect((shown.json as { retention: object }).retention).not.toHaveProperty("workspaceRetentionDays");

    const shorter = await setRetention(free, { retentionDays: 3 });
    expect(shorter.json).toMatchObject({
      retention: { retentionDays: 3, planRetentionDays: 7, workspaceRetentionDays: 3 },
    });
    for (const days of [8, 0]) {
      const refused = await setRetention(free, { retentionDays: days });
      expect(refused.status).toBe(400);
      const problem = refused.json as { code: string; errors: { field: string; message: string }[] };
      expect(problem.code).toBe("invalid_argument");
      expect(problem.errors.map((e) => e.field)).toEqual(["retentionDays"]);
    }
    const tooLong = (await setRetention(free, { retentionDays: 8 })).json as { detail: string };
    expect(tooLong.detail).toContain("at most 7");
    const client = clientWithKey(LogsService, flowlog.server.url, free.key);
    expect((await client.getLogRetention({ workspaceId: free.workspaceId })).retention?.retentionDays).toBe(
      3,
    );

    const back = await setRetention(free, {});
    expect(back.json).toMatchObject({ retention: { retentionDays: 7 } });
    expect((back.json as { retention: object }).retention).not.toHaveProperty("workspaceRetentionDays");
  });

  it("another workspace's is refused (D10)", async () => {
    const [mine, theirs] = [
      await createAccount(flowlog.store, "pro"),
      await createAccount(flowlog.store, "pro"),
    ];
    const response = await restWithKey(flowlog.server.url, mine.key, "GET", retentionPath(theirs));
    expect(response.status).toBe(403);
    const write = await restWithKey(flowlog.server.url, mine.key, "PUT", retentionPath(theirs), {
      retentionDays: 1,
    });
    expect(write.status).toBe(403);
  });
});

describe("the retention purge (D41), by an injected clock", () => {
  it("deletes entries started before each workspace's window, with what refers to them, and nothing else", async () => {
    const free = await createAccount(flowlog.store, "free");
    const pro = await createAccount(flowlog.store, "pro");
    const enterprise = await createAccount(flowlog.store, "enterprise");
    const cutoff = now - 7 * dayMs;
    const [freeGone, freeKept, freeNew] = await logged(free, cutoff - 1, cutoff, now - hour);
    await setRetention(pro, { retentionDays: 3 });
    const [proGone, proKept] = await logged(pro, now - 4 * dayMs, now - 2 * dayMs);
    const [entGone, entKept] = await logged(enterprise, now - 400 * dayMs, now - 100 * dayMs);
    const usage = async (account: TestAccount) =>
      (await restWithKey(flowlog.server.url, account.key, "GET", retentionPath(account))).json as {
        limits: object;
      };
    const usageBefore = await Promise.all([free, pro, enterprise].map(usage));
    lines.length = 0;

    const summary = await purge(worker);

    expect(summary).toMatchObject({ entries: 3, failed: 0 });
    expect(await listed(free)).toEqual([freeKept?.id, freeNew?.id]);
    expect(await listed(pro)).toEqual([proKept?.id]);
    expect(await listed(enterprise)).toEqual([entKept?.id]);
    for (const gone of [freeGone, proGone, entGone]) {
      expect(await flowlog.store.logs.getExecution(gone?.executionId ?? "")).toBeUndefined();
    }
    expect(await Promise.all([free, pro, enterprise].map(usage))).toEqual(usageBefore);
    expect(lines.filter((line) => String(line.msg).startsWith("retention purge"))).toEqual([
      expect.objectContaining({ level: 30, workspaces: 3, entries: 3, failed: 0 }),
    ]);
    expect(
      await metrics.registry.getSingleMetricAsString("flowlog_retention_entries_purged_total"),
    ).toContain('flowlog_retention_entries_purged_total{component="worker"} 3');
    const runs = await metrics.registry.getSingleMetricAsString("flowlog_retention_runs_total");
    expect(runs).toContain('outcome="ok"');

    expect(await purge(worker)).toMatchObject({ workspaces: 0, entries: 0 });
  });

  it("with an archive, archives each whole UTC day before deleting it, and leaves a day the cutoff cuts", async () => {
    const free = await createAccount(flowlog.store, "free");
    const day = (iso: string) => Date.parse(iso);
    // The cutoff is 2027-03-03T12:30Z: March 1 is wholly past it, March 3 only partly.
    const [early, late, cut, kept] = await logged(
      free,
      day("2027-03-01T05:00:00.000Z"),
      day("2027-03-01T20:00:00.000Z"),
      day("2027-03-03T01:00:00.000Z"),
      day("2027-03-05T00:00:00.000Z"),
    );
    expect(early && late).toBeTruthy();
    archived.length = 0;

    expect(await purge(archivingWorker)).toMatchObject({ entries: 2, failed: 0 });

    expect(archived.filter((a) => a.workspaceId === free.workspaceId)).toEqual([
      { workspaceId: free.workspaceId, day: "2027-03-01T00:00:00.000Z", entries: 2 },
    ]);
    expect(await listed(free)).toEqual([cut?.id, kept?.id]);
  });
});

/**
 * What the logs API answers for a workspace's entries of a UTC day, in the list's order: each one's GetLog
 * `data` less `limits` (D42's lines, D45's export format).
 */
async function answersOfDay(account: TestAccount, day: string): Promise<Record<string, unknown>[]> {
  const get = async (path: string) =>
    (await restWithKey(flowlog.server.url, account.key, "GET", path)).json as {
      data: Record<string, unknown>[] & Record<string, unknown>;
    };
  const range = `startDate=${day}T00:00:00.000Z&endDate=${day}T23:59:59.999Z`;
  const page = await get(`/api/v1/logs?workspaceId=${account.workspaceId}&${range}&limit=1000`);
  const answers: Record<string, unknown>[] = [];
  for (const { id } of page.data) {
    const { limits: _limits, ...data } = (await get(`/api/v1/logs/${id}`)).data;
    answers.push(data);
  }
  return answers;
}

describe("the retention purge with FLOWLOG_ARCHIVE_URL's archive (D42)", () => {
  it("each purged day's object reads back as the logs API answered its entries before they went", async () => {
    const free = await createAccount(flowlog.store, "free");
    const day = (iso: string) => Date.parse(iso);
    const entries = await logged(
      free,
      day("2027-03-01T05:00:00.000Z"),
      day("2027-03-01T20:00:00.000Z"),
      day("2027-03-01T20:00:00.000Z"),
      day("2027-03-02T23:59:59.999Z"),
      day("2027-03-05T00:00:00.000Z"),
    );
    const kept = entries.at(-1)?.id;
    const march1 = await answersOfDay(free, "2027-03-01");
    const march2 = await answersOfDay(free, "2027-03-02");
    expect([march1.length, march2.length]).toEqual([3, 1]);

    expect(await purge(filingWorker)).toMatchObject({ failed: 0 });

    expect(await listed(free)).toEqual([kept]);
    for (const [name, expected] of [
      ["2027-03-01", march1],
      ["2027-03-02", march2],
    ] as const) {
      const file = path.join(archiveFolder, free.workspaceId, `${name}.ndjson.gz`);
      const object = await readFile(file);
      const lines = gunzipSync(object).toString("utf8").trim().split("\n");
      expect(lines.map((line) => JSON.parse(line))).toEqual(expected);
      expect(await flowlog.store.archives.get(free.workspaceId, name)).toMatchObject({
        entries: expected.length,
        bytes: object.length,
        sha256: createHash("sha256").update(object).digest("hex"),
        objectUrl: pathToFileURL(file).href,
        writtenAt: now,
      });
    }
    expect((await readdir(path.join(archiveFolder, free.workspaceId))).sort()).toEqual([
      "2027-03-01.ndjson.gz",
      "2027-03-02.ndjson.gz",
    ]);
  });
});

describe("a purge over many workspaces (D41)", () => {
  it("goes through every workspace a page at a time, each run handing the rest to the next", async () => {
    const accounts = await Promise.all(Array.from({ length: 7 }, () => createAccount(flowlog.store, "free")));
    const cutoff = now - 7 * dayMs;
    for (const account of accounts) await logged(account, cutoff - hour, now - hour);
    const handle = await temporal.workflow.start("purgeExpiredLogs", {
      taskQueue: worker.taskQueue,
      workflowId: `retention-test-${randomUUID()}`,
      // One workspace a page, five pages a run: the seven (and the file's others) take more than one run.
      args: [{ workspacesPerPage: 1 }],
    });
    const summary: PurgeRunSummary = await handle.result();

    expect(summary.entries).toBeGreaterThanOrEqual(accounts.length);
    for (const account of accounts) expect(await listed(account)).toHaveLength(1);
    expect((await handle.describe()).runId).not.toBe(handle.firstExecutionRunId);
  });
});

describe("a purge whose worker is killed (D41)", () => {
  it("is finished by the next attempt on another worker: every expired entry gone, nothing else", async () => {
    const free = await createAccount(flowlog.store, "free");
    const cutoff = now - 7 * dayMs;
    // Three days of expired entries, enough that the purge is still going when its worker dies.
    const expired = Array.from({ length: 12_000 }, (_, i) => cutoff - 3 * dayMs + i * 20_000);
    const entries = await logged(free, ...expired, cutoff + 1, now - hour);
    const kept = entries.slice(-2).map((e) => e.id);
    const killQueue = `retention-kill-${randomUUID()}`;
    const doomed = await spawnWorker(killQueue);
    let replacement: RunningWorker | undefined;
    try {
      const run = await temporal.workflow.start("purgeExpiredLogs", {
        taskQueue: killQueue,
        workflowId: `retention-kill-${randomUUID()}`,
        args: [{ heartbeatMs: 2_000 }],
      });
      const left = () => flowlog.store.logDeletion.count({ workspaceId: free.workspaceId });
      await untilTrue(async () => (await left()) < entries.length - 400, 30_000);
      doomed.kill("SIGKILL");
      expect(await left()).toBeGreaterThan(2);
      replacement = await startWorker(
        temporalServer,
        testDeps(flowlog.store, { clock: () => now }),
        killQueue,
      );
      expect(await run.result()).toMatchObject({ failed: 0 });
      expect(await listed(free)).toEqual(kept);
      const orphans = await flowlog.sql<{ n: number }>(
        `SELECT count(*) AS n FROM execution_states e
         WHERE NOT EXISTS (SELECT 1 FROM log_entries l WHERE l.execution_id = e.execution_id)`,
      );
      expect(Number(orphans[0]?.n)).toBe(0);
    } finally {
      doomed.kill("SIGKILL");
      await replacement?.stop();
    }
  }, 60_000);
});

/** A flowlog worker in a process of its own on `queue`, over this file's store, its clock at `now`. */
const spawnWorker = (queue: string) =>
  spawnWorkerProcess(temporalServer, queue, flowlog.dataDir, {
    ...flowlog.env,
    FLOWLOG_TEST_NOW_MS: String(now),
    FLOWLOG_LOG_LEVEL: "error",
  });

describe("the Schedule flowlog-retention (D41)", () => {
  it("a worker creates it, another start updates it: one Schedule, hourly, starting the purge", async () => {
    const scheduleId = `flowlog-retention-test-${randomUUID()}`;
    const first = await startWorker(
      temporalServer,
      testDeps(flowlog.store, { clock: () => now, logger: operatorLog }),
      undefined,
      {
        retentionScheduleId: scheduleId,
      },
    );
    const second = await startWorker(
      temporalServer,
      testDeps(flowlog.store, { clock: () => now, logger: operatorLog }),
      undefined,
      {
        retentionScheduleId: scheduleId,
      },
    );
    const handle = temporal.schedule.getHandle(scheduleId);
    try {
      const described = await handle.describe();
      expect(described.spec.intervals).toMatchObject([{ every: hour }]);
      expect(described.action).toMatchObject({
        workflowType: "purgeExpiredLogs",
        taskQueue: second.taskQueue,
      });
      const ids: string[] = [];
      for await (const schedule of temporal.schedule.list()) ids.push(schedule.scheduleId);
      expect(ids.filter((id) => id === scheduleId)).toHaveLength(1);

      lines.length = 0;
      await handle.trigger();
      await untilTrue(() => lines.some((line) => String(line.msg).startsWith("retention purge")), 30_000);
    } finally {
      await handle.delete();
      await Promise.all([first.stop(), second.stop()]);
    }
  });
});
