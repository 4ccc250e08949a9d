import type { HoldBounds } from "../../domain/hold-policy.js";
import {
  exhaustionsThatHold,
  type HeldDelivery,
  type HoldRow,
  type HoldStatus,
  holdLimitError,
  holdSql,
  holdStatusFromRow,
  subscriptionDisabledError,
} from "../hold-rows.js";
import type { HoldSettling, HoldsArea } from "../holds-store.js";
import { type PostgresPool, type Queryable, withTransaction } from "./database.js";
import { namedStatement } from "./named-parameters.js";

const statements = {
  ...(Object.fromEntries(Object.entries(holdSql).map(([name, sql]) => [name, namedStatement(sql)])) as {
    [K in keyof typeof holdSql]: ReturnType<typeof namedStatement>;
  }),
  /** Locks the subscription's row: a delivery insert (FOR SHARE) waits for what this transaction decides. */
  lock: namedStatement("SELECT hold_state FROM notification_subscriptions WHERE id = @id FOR UPDATE"),
  /**
   * The state is read under a share lock in the statement that holds the delivery: a drain ending the hold
   * at the same time either waits for it (and then finds it held) or is waited for (and then it stays pending).
   */
  holdPending: namedStatement(`UPDATE deliveries d SET status = 'held', updated_at = @at
    FROM (SELECT s.id FROM deliveries x JOIN notification_subscriptions s ON s.id = x.subscription_id
      WHERE x.id = @deliveryId AND s.hold_state <> 'active' FOR SHARE OF s) AS held
    WHERE d.id = @deliveryId AND d.status = 'pending' AND d.subscription_id = held.id`),
};

/**
 * D36's hold and drain on PostgreSQL (D32), with SQLite's statements (hold-rows.ts). A change of state
 * locks the subscription's row; a delivery insert reads it under a share lock (delivery-rows.ts), so the
 * decision "held or pending" never misses a drain's end.
 */
export class PostgresHoldsStore implements HoldsArea {
  constructor(private readonly pool: PostgresPool) {}

  async status(subscriptionId: string): Promise<HoldStatus | undefined> {
    const { rows } = await this.pool.query<HoldRow>(statements.status({ id: subscriptionId }));
    return rows[0] && holdStatusFromRow(rows[0]);
  }

  async heldCount(subscriptionId: string): Promise<number> {
    return heldCountOn(this.pool, subscriptionId);
  }

  async oldestHeld(subscriptionId: string, limit: number): Promise<HeldDelivery[]> {
    return (await this.pool.query<HeldDelivery>(statements.oldestHeld({ id: subscriptionId, limit }))).rows;
  }

  /** SQLite's HoldsStore.settled, on the connection of the delivery log's transaction. */
  async settled(db: Queryable, settling: HoldSettling): Promise<void> {
    const { subscriptionId: id, deliveryId, status, at } = settling;
    if (status === "succeeded" || (status === "failed" && !settling.exhausted)) {
      await db.query(statements.breakRun({ id }));
      return;
    }
    if (status !== "failed") return;
    await db.query(statements.markExhausted({ deliveryId }));
    const { rows } = await db.query<{ inRow: number; state: string }>(statements.countExhausted({ id }));
    const run = rows[0];
    if (!run) return;
    if (run.state !== "active" && !settling.drained) {
      await db.query(statements.keepHeld({ deliveryId }));
      return;
    }
    if (run.inRow < exhaustionsThatHold) return;
    await db.query(statements.hold({ id, at }));
    await db.query(statements.takeBackExhausted({ id, at }));
  }

  async holdPending(deliveryId: string, at: number): Promise<boolean> {
    return ((await this.pool.query(statements.holdPending({ deliveryId, at }))).rowCount ?? 0) > 0;
  }

  async release(subscriptionId: string): Promise<boolean> {
    return ((await this.pool.query(statements.release({ id: subscriptionId }))).rowCount ?? 0) > 0;
  }

  /** With the subscription's row locked, so no delivery insert decides between the count and the end. */
  async finishDrain(subscriptionId: string): Promise<boolean> {
    return withTransaction(this.pool, async (client) => {
      await client.query(statements.lock({ id: subscriptionId }));
      if ((await heldCountOn(client, subscriptionId)) > 0) return false;
      return ((await client.query(statements.end({ id: subscriptionId }))).rowCount ?? 0) > 0;
    });
  }

  async trim(subscriptionId: string, bounds: HoldBounds, now: number): Promise<number> {
    return withTransaction(this.pool, async (client) => {
      await client.query(statements.lock({ id: subscriptionId }));
      const { rows } = await client.query<{ eventAt: number; id: string }>(
        statements.firstBeyond({ id: subscriptionId, maxDeliveries: bounds.maxDeliveries }),
      );
      const beyond = rows[0];
      const trimmed = await client.query(
        statements.trim({
          id: subscriptionId,
          error: holdLimitError(bounds),
          now,
          oldestKept: now - bounds.maxAgeMs,
          beyondAt: beyond?.eventAt ?? null,
          beyondId: beyond?.id ?? null,
        }),
      );
      return trimmed.rowCount ?? 0;
    });
  }

  async abandon(subscriptionId: string, now: number): Promise<number> {
    return withTransaction(this.pool, async (client) => {
      await client.query(statements.lock({ id: subscriptionId }));
      const ended = await client.query(
        statements.failAll({ id: subscriptionId, error: subscriptionDisabledError, now }),
      );
      await client.query(statements.end({ id: subscriptionId }));
      return ended.rowCount ?? 0;
    });
  }
}

async function heldCountOn(db: Queryable, subscriptionId: string): Promise<number> {
  const { rows } = await db.query<{ count: string | number }>(statements.heldCount({ id: subscriptionId }));
  return Number(rows[0]?.count ?? 0);
}
