import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Db, openDatabase } from "../src/store/database.js";
import type { ExecutionRecord } from "../src/store/records.js";
import { entryTexts, entryWords, indexedWords } from "../src/store/search-words.js";
import { sha256 } from "../src/util/sha256.js";
import { type Bench, type BenchOptions, perSecond, ratio } from "./support/report.js";
import { demoExecutions, openBenchStore } from "./support/store.js";

export const batchSize = 1_000;
export const counts = { quick: { single: 100, batched: 5_000 }, full: { single: 3_000, batched: 50_000 } };
export const columns = ["mode", "executions", "store /s", "raw /s", "store/raw"];

/**
 * Executions (log entry, snapshot, trace spans) written per second through LogsStore (issue 7, item 3),
 * one per transaction as the worker writes them and a thousand per transaction as seed does, against
 * plain prepared INSERTs of the same rows into the same schema on a fresh file of the same settings.
 */
export const ingestBench: Bench = {
  name: "ingest",
  async run(options: BenchOptions) {
    const count = options.quick ? counts.quick : counts.full;
    const records = await generate(Math.max(count.single, count.batched));
    const writers = { store: storeWriter, raw: rawWriter };
    return [
      {
        title: "ingest: executions written per second (log entry + snapshot + trace spans)",
        columns,
        rows: await compareModes(records, count, writers),
        note: "raw: prepared INSERTs into log_entries, log_entry_models, execution_states, log_search (the entry's words, split as the store splits them) and (once per distinct state) workflow_states, one transaction per batch.",
      },
    ];
  },
};

/** Realistic executions of the demo workflows, generated once so neither side pays for generating them. */
export async function generate(count: number): Promise<ExecutionRecord[]> {
  const bench = await openBenchStore();
  try {
    return await demoExecutions(bench, count, "bench:ingest");
  } finally {
    await bench.dispose();
  }
}

/** Both modes, single and batched, each through the store and raw. */
export async function compareModes(
  records: ExecutionRecord[],
  count: { single: number; batched: number },
  writers: { store: Writer; raw: Writer },
): Promise<(string | number)[][]> {
  return [
    await compare("single (1 per transaction)", records.slice(0, count.single), 1, writers),
    await compare(
      `batched (${batchSize} per transaction)`,
      records.slice(0, count.batched),
      batchSize,
      writers,
    ),
  ];
}

async function compare(
  mode: string,
  records: ExecutionRecord[],
  perTransaction: number,
  writers: { store: Writer; raw: Writer },
): Promise<(string | number)[]> {
  const raw = await timed(records, perTransaction, writers.raw);
  const store = await timed(records, perTransaction, writers.store);
  return [mode, records.length, perSecond(store), perSecond(raw), ratio(store / raw)];
}

/** Writes batches into a fresh store or file of its own; a PostgreSQL one answers with promises. */
export type Writer = () => Promise<{
  write(batch: ExecutionRecord[]): unknown;
  dispose(): unknown;
}>;

/** Executions per second writing `records` in batches of `perTransaction` on a fresh file or database. */
async function timed(records: ExecutionRecord[], perTransaction: number, open: Writer): Promise<number> {
  const writer = await open();
  try {
    const start = performance.now();
    for (let i = 0; i < records.length; i += perTransaction)
      await writer.write(records.slice(i, i + perTransaction));
    return records.length / ((performance.now() - start) / 1000);
  } finally {
    await writer.dispose();
  }
}

const storeWriter: Writer = async () => {
  const bench = await openBenchStore();
  const { logs } = bench.store;
  return {
    write: (batch) =>
      batch.length === 1 && batch[0] ? logs.insertExecution(batch[0]) : logs.insertExecutions(batch),
    dispose: bench.dispose,
  };
};

const rawWriter: Writer = async () => {
  const dir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-raw-"));
  const db = openDatabase(path.join(dir, "raw.sqlite"));
  const insert = rawInserts(db);
  const write = db.transaction((batch: ExecutionRecord[]) => {
    for (const record of batch) insert(record);
  });
  return {
    write,
    dispose: () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

/** The baseline: the rows LogsStore writes for one execution, by positional prepared statements. */
function rawInserts(db: Db): (record: ExecutionRecord) => void {
  // Then two columns of D44's write order, numbered by the table's trigger, for these rows as for the store's,
  // and cost_canonical (issue 53), set as the store sets it for the costs the engine writes.
  const entry = db.prepare(
    "INSERT INTO log_entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 1)",
  );
  const model = db.prepare("INSERT INTO log_entry_models VALUES (?, ?, ?, ?, ?, ?)");
  const state = db.prepare("INSERT OR IGNORE INTO workflow_states VALUES (?, ?)");
  const executionState = db.prepare("INSERT INTO execution_states VALUES (?, ?, ?)");
  const words = db.prepare("INSERT INTO log_search (rowid, words) VALUES (?, ?)");
  let seq = 0;
  // Like the store, each distinct state object is serialised, hashed and written once.
  const stateKeys = new Map<unknown, Buffer>();
  const stateKey = (workflowState: unknown) => {
    let key = stateKeys.get(workflowState);
    if (key === undefined) {
      const json = JSON.stringify(workflowState);
      key = sha256(json);
      state.run(key, json);
      stateKeys.set(workflowState, key);
    }
    return key;
  };
  return ({ entry: e, workflowState, workflowVersion }) => {
    entry.run(...rawEntryValues(e));
    words.run(++seq, rawEntryWords(e).join(" "));
    for (const [name, cost] of Object.entries(e.cost.models)) {
      model.run(e.workspaceId, name, e.startedAt, e.id, Math.round(cost.total * 1e9), cost.tokens.total);
    }
    executionState.run(e.executionId, stateKey(workflowState), workflowVersion ?? null);
  };
}

/**
 * An entry's words in the search index (D45), as the store indexes them: the bench's stores hold no
 * workflows, so no workflow name is among them on either side.
 */
export function rawEntryWords(e: ExecutionRecord["entry"]): string[] {
  return entryWords(undefined, indexedWords(entryTexts(e.traceSpans, e.finalOutput)));
}

/** The log_entries columns of one entry in table order, as the raw baselines write them by hand. */
export function rawEntryValues(e: ExecutionRecord["entry"]) {
  return [
    e.id,
    e.workspaceId,
    e.workflowId,
    e.folderId,
    e.executionId,
    e.billedUserId,
    e.level,
    e.trigger,
    e.startedAt,
    e.endedAt,
    e.totalDurationMs,
    e.cost.total,
    JSON.stringify({ tokens: e.cost.tokens, models: e.cost.models }),
    e.files == null ? null : JSON.stringify(e.files),
    JSON.stringify(e.traceSpans),
    e.finalOutput === undefined ? null : JSON.stringify(e.finalOutput),
    // trace_spans_canonical, appended by its migration (issue 13), as the store sets it for the spans the
    // engine writes; the check that sets it is the store's own work, measured against this baseline.
    1,
  ];
}
