import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deleteInBatches, deletionBatchSize } from "../src/store/log-deletion.js";
import { LogDeletionStore } from "../src/store/log-deletion-store.js";
import { LogsStore } from "../src/store/logs-store.js";
import { ParkedOutputsStore } from "../src/store/parked-outputs-store.js";
import { PostgresLogDeletionStore } from "../src/store/postgres/log-deletion-store.js";
import { PostgresLogsStore } from "../src/store/postgres/logs-store.js";
import { PostgresParkedOutputsStore } from "../src/store/postgres/parked-outputs-store.js";
import type { ExecutionRecord } from "../src/store/records.js";
import type { StoreArea } from "../src/store/store.js";
import { execution, testWorkflowState } from "./support/flowlog.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import { addSubscription, type ContractDatabase, storeKinds } from "./support/store-kinds.js";

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

interface Areas {
  deletion: StoreArea<LogDeletionStore>;
  logs: Pick<
    StoreArea<LogsStore>,
    "insertExecution" | "insertExecutions" | "getExecution" | "recordRetry" | "forgetRetry" | "retryLinks"
  >;
  parked: StoreArea<ParkedOutputsStore>;
}

const kinds = storeKinds<Areas>(
  {
    sqlite: (db) => ({
      deletion: new LogDeletionStore(db),
      logs: new LogsStore(db),
      parked: new ParkedOutputsStore(db),
    }),
    postgres: (pool) => ({
      deletion: new PostgresLogDeletionStore(pool),
      logs: new PostgresLogsStore(pool),
      parked: new PostgresParkedOutputsStore(pool),
    }),
  },
  () => server,
);

const workspace = { userId: "usr_del", workspaceId: "ws_del", key: "", keyId: "" };
const neighbour = { userId: "usr_other", workspaceId: "ws_other", key: "", keyId: "" };
const t0 = Date.parse("2026-10-30T23:00:00.000Z");
const hour = 60 * 60 * 1000;
/** A workflow state only the oldest entry ran: its snapshot goes with it. */
const ownState = { ...testWorkflowState, blocks: [] };

function at(
  account: typeof workspace,
  startedAt: number,
  state: object = testWorkflowState,
): ExecutionRecord {
  return { ...execution(account, "wf_del", { startedAt }), workflowState: state };
}

/** Every row of the tables deletion touches, as ids, to compare before and after. */
async function rows(db: ContractDatabase<Areas>) {
  const ids = async (sql: string) => (await db.query<{ k: string }>(sql)).map((r) => String(r.k)).sort();
  return {
    entries: await ids("SELECT id AS k FROM log_entries"),
    models: await ids("SELECT log_id AS k FROM log_entry_models"),
    executionStates: await ids("SELECT execution_id AS k FROM execution_states"),
    states: (await db.query<{ n: number }>("SELECT count(*) AS n FROM workflow_states"))[0]?.n,
    deliveries: await ids("SELECT id AS k FROM deliveries"),
    attempts: await ids("SELECT delivery_id || '/' || attempt AS k FROM delivery_attempts"),
    outbox: await ids("SELECT log_id AS k FROM notification_outbox"),
    parked: await ids("SELECT execution_id AS k FROM parked_outputs"),
  };
}

async function usage(db: ContractDatabase<Areas>) {
  return db.query("SELECT user_id, period_start, cost FROM usage_periods ORDER BY user_id, period_start");
}

async function addDelivery(db: ContractDatabase<Areas>, id: string, logId: string, attempts: number) {
  await db.query(
    `INSERT INTO deliveries (id, event_id, event_type, subscription_id, workspace_id, log_id, event_json, status,
       attempts, created_at, updated_at, event_at)
     VALUES (@id, @eventId, 'workflow.execution.completed', 'sub_del', @workspaceId, @logId, '{}', 'failed',
       @attempts, 0, 0, 0)`,
    { id, eventId: `evt_${id}`, workspaceId: workspace.workspaceId, logId, attempts },
  );
  for (let attempt = 1; attempt <= attempts; attempt++) {
    await db.query(
      `INSERT INTO delivery_attempts (delivery_id, series, attempt, started_at, duration_ms, outcome, http_status)
       VALUES (@id, 1, @attempt, 0, 5, 'retrying', 503)`,
      { id, attempt },
    );
  }
}

describe.each(kinds)("deleting log entries with what hangs off them, on %s (D41, D43)", (_, open) => {
  let db: ContractDatabase<Areas>;
  let areas: Areas;
  beforeEach(async () => {
    db = await open();
    areas = db.areas;
    await addSubscription(db, { id: "sub_del", workspaceId: workspace.workspaceId, url: "https://x.test/h" });
  });
  afterEach(() => db.close());

  it("the selected entries go with everything referring to them, and nothing else goes", async () => {
    const oldest = at(workspace, t0, ownState);
    const older = at(workspace, t0 + hour);
    const kept = at(workspace, t0 + 48 * hour);
    const otherWorkspace = at(neighbour, t0);
    await areas.logs.insertExecution(oldest, {
      logId: oldest.entry.id,
      workspaceId: workspace.workspaceId,
      workflowId: "wf_del",
      taskQueue: "flowlog",
    });
    await areas.logs.insertExecutions([older, kept, otherWorkspace]);
    await addDelivery(db, "dlv_oldest", oldest.entry.id, 2);
    await addDelivery(db, "dlv_kept", kept.entry.id, 1);
    await areas.parked.park(oldest.entry.executionId, "run/1", "{}", t0);
    await areas.parked.park(kept.entry.executionId, "run/1", "{}", t0);
    const usageBefore = await usage(db);
    const filter = { workspaceId: workspace.workspaceId, startedTo: t0 + hour };
    expect(await areas.deletion.count(filter)).toBe(2);

    const { deleted, done } = await deleteInBatches(areas.deletion, filter);

    expect(done).toBe(true);
    expect(deleted).toEqual({
      entries: 2,
      snapshots: 1,
      deliveries: 1,
      deliveryAttempts: 2,
      parkedOutputs: 1,
    });
    const remaining = [kept.entry, otherWorkspace.entry];
    expect(await rows(db)).toEqual({
      entries: remaining.map((e) => e.id).sort(),
      models: remaining.map((e) => e.id).sort(),
      executionStates: remaining.map((e) => e.executionId).sort(),
      // The state the kept entries share stays; the one only the oldest ran is gone.
      states: 1,
      deliveries: ["dlv_kept"],
      attempts: ["dlv_kept/1"],
      outbox: [],
      parked: [kept.entry.executionId],
    });
    expect(await areas.deletion.count(filter)).toBe(0);
    expect(await usage(db)).toEqual(usageBefore);
    expect(usageBefore.length).toBeGreaterThan(0);
  });

  it("retry links (D47): the newest retry is retriedBy, a deleted retry takes its link, a deleted original leaves its retries' retryOf", async () => {
    const [original, first, second] = [
      at(workspace, t0),
      at(workspace, t0 + hour),
      at(workspace, t0 + 2 * hour),
    ];
    await areas.logs.insertExecutions([original, first, { ...second, workflowVersion: 3 }]);
    const originalId = original.entry.executionId;
    const firstId = first.entry.executionId;
    const secondId = second.entry.executionId;
    for (const [executionId, createdAt] of [
      [firstId, t0 + hour],
      [secondId, t0 + 2 * hour],
    ] as const) {
      await areas.logs.recordRetry({ executionId, retryOf: originalId, createdAt });
      // Recorded twice (a retried start): one link still.
      await areas.logs.recordRetry({ executionId, retryOf: originalId, createdAt });
    }
    expect(await areas.logs.retryLinks(originalId)).toEqual({ retriedBy: secondId });
    expect(await areas.logs.retryLinks(firstId)).toEqual({ retryOf: originalId });
    expect((await areas.logs.getExecution(secondId))?.workflowVersion).toBe(3);
    expect((await areas.logs.getExecution(firstId))?.workflowVersion).toBeNull();

    await deleteInBatches(areas.deletion, { workspaceId: workspace.workspaceId, executionIds: [secondId] });
    expect(await areas.logs.retryLinks(originalId)).toEqual({ retriedBy: firstId });
    await deleteInBatches(areas.deletion, { workspaceId: workspace.workspaceId, executionIds: [originalId] });
    expect(await areas.logs.retryLinks(firstId)).toEqual({ retryOf: originalId });
    await areas.logs.forgetRetry(firstId);
    expect(await areas.logs.retryLinks(firstId)).toEqual({});
  });

  it("a snapshot another remaining entry still uses is kept, whichever batch its users fall in", async () => {
    const first = at(workspace, t0, ownState);
    const second = at(workspace, t0 + hour, ownState);
    await areas.logs.insertExecutions([first, second]);
    const batch = await areas.deletion.deleteBatch({ workspaceId: workspace.workspaceId }, 1);
    expect(batch).toMatchObject({ entries: 1, snapshots: 0 });
    expect((await rows(db)).entries).toEqual([second.entry.id]);
    expect(await areas.deletion.deleteBatch({ workspaceId: workspace.workspaceId }, 1)).toMatchObject({
      entries: 1,
      snapshots: 1,
    });
  });

  it("by execution ids: those executions of the workspace only, not another workspace's", async () => {
    const mine = [at(workspace, t0), at(workspace, t0 + 1), at(workspace, t0 + 2)];
    const theirs = at(neighbour, t0);
    await areas.logs.insertExecutions([...mine, theirs]);
    const filter = {
      workspaceId: workspace.workspaceId,
      executionIds: [
        mine[0]?.entry.executionId ?? "",
        mine[2]?.entry.executionId ?? "",
        theirs.entry.executionId,
      ],
    };
    expect(await areas.deletion.count(filter)).toBe(2);
    expect((await deleteInBatches(areas.deletion, filter)).deleted.entries).toBe(2);
    expect((await rows(db)).entries).toEqual([mine[1]?.entry.id, theirs.entry.id].sort());
  });

  it("by the list's filters, the model filter included", async () => {
    const matching = at(workspace, t0);
    const errored = {
      ...at(workspace, t0 + 1),
      entry: { ...at(workspace, t0 + 1).entry, level: "error" as const },
    };
    await areas.logs.insertExecutions([matching, errored]);
    const filter = { workspaceId: workspace.workspaceId, model: "gpt-4o", level: "error" as const };
    expect(await areas.deletion.count(filter)).toBe(1);
    expect((await deleteInBatches(areas.deletion, filter)).deleted.entries).toBe(1);
    expect((await rows(db)).entries).toEqual([matching.entry.id]);
  });

  it("in batches, oldest first, stopping at a bound and finishing later", async () => {
    const total = deletionBatchSize + 50;
    const records = Array.from({ length: total }, (_, i) => at(workspace, t0 + i * 1000));
    await areas.logs.insertExecutions(records);
    const filter = { workspaceId: workspace.workspaceId };
    const batches: number[] = [];
    const first = await deleteInBatches(areas.deletion, filter, {
      maxEntries: deletionBatchSize + 10,
      onBatch: (batch) => batches.push(batch.entries),
    });
    expect(first).toMatchObject({ done: false, deleted: { entries: deletionBatchSize + 10 } });
    expect(batches).toEqual([deletionBatchSize, 10]);
    // Oldest first: what is left is the newest.
    expect((await rows(db)).entries).toEqual(
      records
        .slice(deletionBatchSize + 10)
        .map((r) => r.entry.id)
        .sort(),
    );
    const rest = await deleteInBatches(areas.deletion, filter);
    expect(rest).toMatchObject({ done: true, deleted: { entries: 40 } });
    expect(await rows(db)).toMatchObject({ entries: [], models: [], executionStates: [], states: 0 });
  });
});
