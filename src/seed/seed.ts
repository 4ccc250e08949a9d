import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { type FieldViolation, invalidArgument } from "../errors/api-errors.js";
import { type ExecutionRows, executionRows } from "../store/log-rows.js";
import type { ExecutionRecord, WorkflowRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { FolderRecord } from "../store/workflows-store.js";
import { demoWorkflows } from "./demo-workflows.js";
import { generateExecutions } from "./generate.js";
import { Random } from "./random.js";

export interface SeedOptions {
  workspaceId: string;
  executions: number;
  /** The workspace ends up with at least this many workflows (default 5). */
  workflows?: number;
  /** Starts spread over this many days before now (default 30). */
  days?: number;
  /**
   * Random by default. The same seed on the same workspace draws the same identifiers, so a re-run adds
   * nothing (insertExecutions is idempotent on the execution id, D17).
   */
  seed?: string;
  now?: number;
  /** Executions per transaction. */
  batchSize?: number;
  onProgress?: (written: number, total: number) => void;
}

export interface SeedResult {
  seed: string;
  workflowsCreated: number;
  /** New executions; fewer than asked only when a re-used seed met rows it had written before. */
  executionsWritten: number;
}

const defaults = { workflows: 5, days: 30, batchSize: 5_000 };
const limits = { executions: 100_000_000, workflows: 1_000, days: 3_650 };

/**
 * Demo and test data (issue 3, item 7): tops the workspace up to M workflows, then writes N executions
 * through LogsStore.insertExecutions, the same path the worker uses, a batch per transaction so that a
 * million rows cost a few hundred fsyncs rather than a million (D23).
 */
export async function seedWorkspace(store: Store, options: SeedOptions): Promise<SeedResult> {
  const { workspaceId, executions } = options;
  const workflowCount = options.workflows ?? defaults.workflows;
  const days = options.days ?? defaults.days;
  checkOptions(executions, workflowCount, days);
  if (!(await store.accounts.getWorkspace(workspaceId))) {
    throw new ConnectError(`workspace ${workspaceId} does not exist`, Code.NotFound);
  }
  const seed = options.seed ?? randomBytes(8).toString("hex");
  const now = options.now ?? Date.now();
  const workflowsCreated = await topUpWorkflows(store, { seed, workspaceId, wanted: workflowCount, now });
  // Generated in this thread: a worker thread would overlap generating and writing, but sending each row
  // across (as JSON, parsed again here) costs more than it saves on a busy machine (issue 14, item 4).
  const records = generateExecutions(new Random(`${seed}:${workspaceId}:executions`), {
    workflows: await store.workflows.listWorkflows(workspaceId),
    count: executions,
    days,
    now,
    // Demo runs are nobody's spend. Billed to the first member, as they once were, 100,000 of them used up
    // any plan's month (D12), and the member's first real execution after `flowlog seed` was refused.
    billedUserId: null,
  });
  const executionsWritten = await writeInBatches(store, records, executions, {
    batchSize: options.batchSize ?? defaults.batchSize,
    onProgress: options.onProgress,
  });
  return { seed, workflowsCreated, executionsWritten };
}

function checkOptions(executions: number, workflows: number, days: number): void {
  const violations: FieldViolation[] = [];
  const check = (field: string, value: number, min: number, max: number) => {
    if (!Number.isInteger(value) || value < min || value > max) {
      violations.push({ field, message: `${field} must be an integer from ${min} to ${max}` });
    }
  };
  check("executions", executions, 0, limits.executions);
  check("workflows", workflows, 1, limits.workflows);
  check("days", days, 1, limits.days);
  if (violations.length > 0) throw invalidArgument(violations);
}

/**
 * New workflows go into two new folders and the top level. The random source is keyed by how many
 * workflows exist, so topping up again later never reuses an id.
 */
async function topUpWorkflows(
  store: Store,
  target: { seed: string; workspaceId: string; wanted: number; now: number },
): Promise<number> {
  const existing = (await store.workflows.listWorkflows(target.workspaceId)).length;
  if (existing >= target.wanted) return 0;
  const rng = new Random(`${target.seed}:${target.workspaceId}:workflows:${existing}`);
  const folders: FolderRecord[] = ["Production", "Experiments"].map((name) => ({
    id: rng.id("fld"),
    workspaceId: target.workspaceId,
    name,
    createdAt: target.now,
  }));
  const workflows: WorkflowRecord[] = demoWorkflows(rng, {
    workspaceId: target.workspaceId,
    folders: [...folders.map((f) => f.id), null],
    existing,
    count: target.wanted - existing,
    now: target.now,
  });
  for (const folder of folders) await store.workflows.createFolder(folder);
  for (const workflow of workflows) await store.workflows.createWorkflow(workflow);
  return workflows.length;
}

async function writeInBatches(
  store: Store,
  records: AsyncIterable<ExecutionRecord>,
  total: number,
  options: { batchSize: number; onProgress: SeedOptions["onProgress"] },
): Promise<number> {
  const { batchSize } = options;
  // Serialised as each arrives: a batch of strings, not of object graphs, until its transaction.
  let batch: ExecutionRows[] = [];
  let done = 0;
  let written = 0;
  const flush = async () => {
    written += await store.logs.insertRows(batch);
    done += batch.length;
    batch = [];
    options.onProgress?.(done, total);
  };
  for await (const record of records) {
    batch.push(executionRows(record));
    if (batch.length === batchSize) await flush();
  }
  if (batch.length > 0) await flush();
  return written;
}
