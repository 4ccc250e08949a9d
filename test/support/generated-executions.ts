import { demoWorkflows } from "../../src/seed/demo-workflows.js";
import { generateExecutions } from "../../src/seed/generate.js";
import { Random } from "../../src/seed/random.js";
import type { ExecutionRecord } from "../../src/store/records.js";

export interface GeneratedExecutions {
  workspaceId: string;
  count: number;
  /** The same seed gives the same executions, identifiers included. */
  seed: string;
  now?: number;
  /** Starts spread over this many days before now (default 30). */
  days?: number;
}

/**
 * Realistic executions of five demo workflows in two folders and the top level, as the seeder makes
 * them (bursts on one millisecond, models, errors, trace spans), without a store to hold the workflows:
 * for writing the same records into either store. A generator, so a million never sit in memory.
 */
export function generatedExecutions(request: GeneratedExecutions): AsyncGenerator<ExecutionRecord> {
  const { workspaceId, count, seed, now = Date.now(), days = 30 } = request;
  const rng = new Random(`${seed}:${workspaceId}`);
  const folders = [rng.id("fld"), rng.id("fld"), null];
  const workflows = demoWorkflows(rng, { workspaceId, folders, existing: 0, count: 5, now });
  return generateExecutions(rng, { workflows, count, days, now, billedUserId: rng.id("usr") });
}

/** The same, all at once, for the small counts a test writes. */
export async function generatedExecutionList(request: GeneratedExecutions): Promise<ExecutionRecord[]> {
  const records: ExecutionRecord[] = [];
  for await (const record of generatedExecutions(request)) records.push(record);
  return records;
}
