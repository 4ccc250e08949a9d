import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateExecutions } from "../../src/seed/generate.js";
import { Random } from "../../src/seed/random.js";
import { seedWorkspace } from "../../src/seed/seed.js";
import type { ExecutionRecord, UserRecord } from "../../src/store/records.js";
import { openStore, type Store } from "../../src/store/store.js";
import { newId } from "../../src/util/ids.js";

/**
 * Executions per transaction when a bench seeds a large store (list-query, purge): ten times `flowlog
 * seed`'s 5,000. Seeding 500k on SQLite ran at 1.46x the rate of batches of 5,000, in one pair of runs on a
 * shared machine (issue 52); a batch's rows, serialised, take about 275 MB until its transaction.
 */
export const largeSeedBatch = 50_000;

/** A store on a fresh SQLite file in a temp directory, with one enterprise user owning one workspace. */
export interface BenchStore {
  store: Store;
  dataDir: string;
  user: UserRecord;
  workspaceId: string;
  /** Closes the store and deletes its directory (leaves it, for a store opened in `keptIn`). */
  dispose(): Promise<void>;
}

/** `keptIn`: a directory of the caller's (`--keep-stores`), emptied first and left at the end. */
export async function openBenchStore(keptIn?: string): Promise<BenchStore> {
  if (keptIn) {
    rmSync(keptIn, { recursive: true, force: true });
    mkdirSync(keptIn, { recursive: true });
  }
  const dataDir = keptIn ?? mkdtempSync(path.join(tmpdir(), "flowlog-bench-"));
  const store = openStore({ dataDir });
  const now = Date.now();
  const user: UserRecord = {
    id: newId("usr"),
    email: "bench@example.test",
    plan: "enterprise",
    createdAt: now,
  };
  const workspaceId = newId("ws");
  await store.accounts.createUser(user);
  await store.accounts.createWorkspace({ id: workspaceId, name: "bench", createdAt: now }, [user.id]);
  return {
    store,
    dataDir,
    user,
    workspaceId,
    dispose: async () => {
      await store.close();
      if (!keptIn) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `size` of the seeder's executions (seed "bench", ending at `now`) in the bench store's workspace, in large batches. */
export async function seedLarge(bench: BenchStore, size: number, now: number): Promise<void> {
  await seedWorkspace(bench.store, {
    workspaceId: bench.workspaceId,
    executions: size,
    seed: "bench",
    now,
    batchSize: largeSeedBatch,
  });
}

/**
 * `count` realistic executions of the demo workflows, seeded into the bench store's workspace (so their
 * log entries can be written to it) and generated from `seed`.
 */
export async function demoExecutions(
  bench: BenchStore,
  count: number,
  seed: string,
): Promise<ExecutionRecord[]> {
  await seedWorkspace(bench.store, { workspaceId: bench.workspaceId, executions: 0, seed: "bench" });
  const workflows = await bench.store.workflows.listWorkflows(bench.workspaceId);
  const request = { workflows, count, days: 30, now: Date.now(), billedUserId: bench.user.id };
  const records: ExecutionRecord[] = [];
  for await (const record of generateExecutions(new Random(seed), request)) records.push(record);
  return records;
}
