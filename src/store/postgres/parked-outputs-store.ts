import { type ParkedOutputsStore, parkedOutputRetentionMs } from "../parked-outputs-store.js";
import type { StoreArea } from "../store.js";
import type { PostgresPool } from "./database.js";

/** Block outputs parked outside Temporal's payloads (D32): SQLite's ParkedOutputsStore, on the pool. */
export class PostgresParkedOutputsStore implements StoreArea<ParkedOutputsStore> {
  constructor(private readonly pool: PostgresPool) {}

  async park(executionId: string, key: string, valueJson: string, now: number): Promise<void> {
    await this.pool.query("DELETE FROM parked_outputs WHERE parked_at < $1", [now - parkedOutputRetentionMs]);
    await this.pool.query(
      `INSERT INTO parked_outputs (execution_id, key, value_json, parked_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (execution_id, key) DO UPDATE SET value_json = excluded.value_json`,
      [executionId, key, valueJson, now],
    );
  }

  async read(executionId: string, key: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ value_json: string }>(
      "SELECT value_json FROM parked_outputs WHERE execution_id = $1 AND key = $2",
      [executionId, key],
    );
    return rows[0]?.value_json;
  }

  async release(executionId: string): Promise<void> {
    await this.pool.query("DELETE FROM parked_outputs WHERE execution_id = $1", [executionId]);
  }
}
