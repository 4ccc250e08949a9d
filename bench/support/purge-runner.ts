import { setImmediate as nextTurn } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { databaseFile, openDatabase } from "../../src/store/database.js";
import { deleteInBatches, deletionBatchSize, purgePause } from "../../src/store/log-deletion.js";
import { openConfiguredStore } from "../../src/store/open-store.js";
import { openPostgres, withTransaction } from "../../src/store/postgres/database.js";

/**
 * The purge bench's deleting side, in a process of its own as the retention purge runs in `flowlog
 * worker`: the REST load measured beside it must not wait on this event loop. Deletes a workspace's
 * entries that started before a cutoff, one way or the other, and prints how many went and how long the
 * deletion took, from its first batch to its last:
 *
 *   node --import tsx bench/support/purge-runner.ts store|bare '<PurgeTarget as JSON>'
 *
 * - store: `deleteInBatches` over the store's `logDeletion` area, what D41's purge runs; under one filter up
 *   to the cutoff, where the purge takes a UTC day at a time (the same batches, fewer looks for the oldest).
 * - bare: the baseline, the same rows in transactions of the same size, a statement per table over the
 *   batch's ids and nothing else.
 */
export interface PurgeTarget {
  dataDir: string;
  /** PostgreSQL's; the SQLite file in `dataDir` when absent. */
  databaseUrl?: string;
  masterKey: string;
  workspaceId: string;
  /** Entries that started before this go. */
  cutoff: number;
}

/** What the parent reads on this process's stdout. */
export const purgeStarted = "purging";
export const purgeFinished = "purged ";

interface Purge {
  /** Deletes every selected entry; answers how many went. */
  run(): Promise<number>;
  close(): Promise<void>;
}

async function storePurge(target: PurgeTarget): Promise<Purge> {
  const store = await openConfiguredStore({ ...target, databaseUrl: target.databaseUrl });
  const filter = { workspaceId: target.workspaceId, startedTo: target.cutoff - 1 };
  return {
    // At the pace D41's purge deletes at (retention-activities.ts).
    run: async () =>
      (await deleteInBatches(store.logDeletion, filter, { pause: purgePause })).deleted.entries,
    close: () => store.close(),
  };
}

interface Doomed {
  id: string;
  executionId: string;
  startedAt: number;
}

/** The oldest batch of entries before the cutoff, along log_entries_by_time. */
const doomedSql = (workspace: string, cutoff: string, limit: string) =>
  `SELECT id, execution_id AS "executionId", started_at AS "startedAt" FROM log_entries
   WHERE workspace_id = ${workspace} AND started_at < ${cutoff} ORDER BY started_at, id LIMIT ${limit}`;

function bareSqlite(target: PurgeTarget): Purge {
  const db = openDatabase(databaseFile(target.dataDir));
  const doomed = db.prepare(doomedSql("?", "?", "?"));
  const ids = "(SELECT value FROM json_each(?))";
  const models = db.prepare(
    `DELETE FROM log_entry_models WHERE workspace_id = ? AND started_at BETWEEN ? AND ? AND log_id IN ${ids}`,
  );
  const states = db.prepare(`DELETE FROM execution_states WHERE execution_id IN ${ids}`);
  const entries = db.prepare(`DELETE FROM log_entries WHERE id IN ${ids}`);
  const batch = db.transaction((): number => {
    const rows = doomed.all(target.workspaceId, target.cutoff, deletionBatchSize) as Doomed[];
    const first = rows[0];
    const last = rows.at(-1);
    if (!first || !last) return 0;
    const entryIds = JSON.stringify(rows.map((row) => row.id));
    models.run(target.workspaceId, first.startedAt, last.startedAt, entryIds);
    states.run(JSON.stringify(rows.map((row) => row.executionId)));
    return entries.run(entryIds).changes;
  });
  return {
    run: () => inBatches(async () => batch.immediate()),
    close: async () => {
      db.close();
    },
  };
}

async function barePostgres(target: PurgeTarget, url: string): Promise<Purge> {
  const pool = await openPostgres(url, { migrate: false });
  const batch = () =>
    withTransaction(pool, async (client) => {
      const { rows } = await client.query<Doomed>(doomedSql("$1", "$2", "$3"), [
        target.workspaceId,
        target.cutoff,
        deletionBatchSize,
      ]);
      const first = rows[0];
      const last = rows.at(-1);
      if (!first || !last) return 0;
      const entryIds = rows.map((row) => row.id);
      await client.query(
        `DELETE FROM log_entry_models WHERE workspace_id = $1 AND started_at BETWEEN $2 AND $3
         AND log_id = ANY($4::text[])`,
        [target.workspaceId, first.startedAt, last.startedAt, entryIds],
      );
      await client.query("DELETE FROM execution_states WHERE execution_id = ANY($1::text[])", [
        rows.map((row) => row.executionId),
      ]);
      return (
        (await client.query("DELETE FROM log_entries WHERE id = ANY($1::text[])", [entryIds])).rowCount ?? 0
      );
    });
  return { run: () => inBatches(batch), close: () => pool.end() };
}

/** Runs `batch` until one deletes less than a whole batch, yielding between batches as deleteInBatches does. */
async function inBatches(batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await batch();
    total += deleted;
    if (deleted < deletionBatchSize) return total;
    await nextTurn();
  }
}

async function main(how: string | undefined, json: string | undefined): Promise<void> {
  if ((how !== "store" && how !== "bare") || json === undefined) {
    throw new Error("usage: purge-runner.ts store|bare '<PurgeTarget as JSON>'");
  }
  const target = JSON.parse(json) as PurgeTarget;
  const { databaseUrl } = target;
  const purge =
    how === "store"
      ? await storePurge(target)
      : databaseUrl
        ? await barePostgres(target, databaseUrl)
        : bareSqlite(target);
  console.log(purgeStarted);
  const started = performance.now();
  const entries = await purge.run();
  const seconds = (performance.now() - started) / 1000;
  await purge.close();
  console.log(`${purgeFinished}${JSON.stringify({ entries, seconds })}`);
}

// Run, not imported (purge.ts imports the target's shape and the markers).
if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2], process.argv[3]);
