import { type ParkedOutputsStore, parkedOutputRetentionMs } from "../parked-outputs-store.js";
import type { StoreArea } from "../store.js";
import type { PostgresPool } from "./database.js";

/** Block outputs parked outside Temporal's payloads (D32): SQLite's ParkedOutputsStore, on the pool. */
export class PostgresParkedOutputsStore implements StoreArea<ParkedOutputsStore> {
  constructor(private readonly pool: PostgresPool) {}

  async park(executionId: string, key: string, outcomeJson: string, now: number): Promise<void> {
    await this.pool.query("DELETE FROM parked_outputs WHERE parked_at < $1", [now - parkedOutputRetentionMs]);
    await this.pool.query(
      `INSERT INTO parked_outputs (execution_id, key, outcome_json, parked_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (execution_id, key) DO UPDATE SET outcome_json = excluded.outcome_json`,
      [executionId, key, outcomeJson, now],
    );
  }

  async read(executionId: string, key: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ outcome_json: string }>(
      "SELECT outcome_json FROM parked_outputs WHERE execution_id = $1 AND key = $2",
      [executionId, key],
    );
    return rows[0]?.outcome_json;
  }

  async release(executionId: string): Promise<void> {
    await this.pool.query("DELETE FROM parked_outputs WHERE execution_id = $1", [executionId]);
  }
}
