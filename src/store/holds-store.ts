import type { HoldBounds } from "../domain/hold-policy.js";
import type { Db } from "./database.js";
import type { DeliveryStatus } from "./delivery-rows.js";
import {
  exhaustionsThatHold,
  type HeldDelivery,
  type HoldRow,
  type HoldStatus,
  holdLimitError,
  holdSql,
  holdStatusFromRow,
  subscriptionDisabledError,
} from "./hold-rows.js";

/** How a delivery settled, as D36's count of exhaustions needs it. */
export interface HoldSettling {
  subscriptionId: string;
  deliveryId: string;
  status: DeliveryStatus;
  /** It ended failed after its whole schedule on retryable outcomes. */
  exhausted: boolean;
  /** It was sent by a drain, whose own exhaustions hold the endpoint again. */
  drained: boolean;
  at: number;
}

/**
 * The area as the services see it (D32). `settled` is left out: the delivery log calls it inside its own
 * transaction, on that transaction's connection.
 */
export type HoldsArea = Omit<HoldsStore, "settled">;

/**
 * D36's hold and drain on SQLite: the state of a subscription, the run of exhausted deliveries that holds
 * it (counted as each delivery settles, in the delivery log's transaction), and the held queue. Every
 * change of state and every decision about a delivery's status is one statement or one write
 * transaction, so a delivery made while a drain empties the queue is either in the queue or sent.
 */
export class HoldsStore {
  private readonly statements;
  private readonly holdPendingStatement;

  constructor(private readonly db: Db) {
    this.statements = Object.fromEntries(
      Object.entries(holdSql).map(([name, sql]) => [name, db.prepare(sql)]),
    ) as { [K in keyof typeof holdSql]: ReturnType<Db["prepare"]> };
    this.holdPendingStatement = db.prepare(holdPendingSql);
  }

  async status(subscriptionId: string): Promise<HoldStatus | undefined> {
    const row = this.statements.status.get({ id: subscriptionId }) as HoldRow | undefined;
    return row && holdStatusFromRow(row);
  }

  async heldCount(subscriptionId: string): Promise<number> {
    return (this.statements.heldCount.get({ id: subscriptionId }) as { count: number }).count;
  }

  /** The oldest held deliveries by event time, at most `limit`. */
  async oldestHeld(subscriptionId: string, limit: number): Promise<HeldDelivery[]> {
    return this.statements.oldestHeld.all({ id: subscriptionId, limit }) as HeldDelivery[];
  }

  /**
   * A delivery settled (called by the delivery log in its transaction). A success or a 4xx breaks the run;
   * an exhaustion extends it, and the third in a row holds the endpoint, taking back what the outage kept
   * from the receiver since its failure run began. A series that ends exhausted while its endpoint is
   * held or draining waits with the held ones instead; a drain's own exhaustion counts.
   */
  settled(settling: HoldSettling): void {
    const { subscriptionId: id, deliveryId, status, at } = settling;
    if (status === "succeeded" || (status === "failed" && !settling.exhausted)) {
      this.statements.breakRun.run({ id });
      return;
    }
    if (status !== "failed") return;
    this.statements.markExhausted.run({ deliveryId });
    const run = this.statements.countExhausted.get({ id }) as { inRow: number; state: string } | undefined;
    if (!run) return;
    if (run.state !== "active" && !settling.drained) {
      this.statements.keepHeld.run({ deliveryId });
      return;
    }
    if (run.inRow < exhaustionsThatHold) return;
    this.statements.hold.run({ id, at });
    this.statements.takeBackExhausted.run({ id, at });
  }

  /**
   * A series about to make an attempt stops if its endpoint is held or draining (D36: held deliveries cost
   * no attempts): the delivery is held instead. True when it was.
   */
  async holdPending(deliveryId: string, at: number): Promise<boolean> {
    return this.holdPendingStatement.run({ deliveryId, at }).changes > 0;
  }

  /** The probe got through: the endpoint drains. False when it was not held (a retry found its own). */
  async release(subscriptionId: string): Promise<boolean> {
    return this.statements.release.run({ id: subscriptionId }).changes > 0;
  }

  /** The drain found nothing left: the endpoint is active again, in the transaction that looked. */
  async finishDrain(subscriptionId: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        const { count } = this.statements.heldCount.get({ id: subscriptionId }) as { count: number };
        return count === 0 && this.statements.end.run({ id: subscriptionId }).changes > 0;
      })
      .immediate();
  }

  /** D36's bounds: the held deliveries past either end `failed` with reason hold_limit. How many did. */
  async trim(subscriptionId: string, bounds: HoldBounds, now: number): Promise<number> {
    return this.db
      .transaction(() => {
        const beyond = this.statements.firstBeyond.get({
          id: subscriptionId,
          maxDeliveries: bounds.maxDeliveries,
        }) as { eventAt: number; id: string } | undefined;
        return this.statements.trim.run({
          id: subscriptionId,
          error: holdLimitError(bounds),
          now,
          oldestKept: now - bounds.maxAgeMs,
          beyondAt: beyond?.eventAt ?? null,
          beyondId: beyond?.id ?? null,
        }).changes;
      })
      .immediate();
  }

  /**
   * The subscription was disabled (D35, or by its owner) while held: its held deliveries end `failed` with
   * reason subscription_disabled and the hold is over. How many ended.
   */
  async abandon(subscriptionId: string, now: number): Promise<number> {
    return this.db
      .transaction(() => {
        const ended = this.statements.failAll.run({
          id: subscriptionId,
          error: subscriptionDisabledError,
          now,
        }).changes;
        this.statements.end.run({ id: subscriptionId });
        return ended;
      })
      .immediate();
  }
}

/** One statement: the subscription's state is read where the delivery is changed (holdSql's note). */
const holdPendingSql = `UPDATE deliveries SET status = 'held', updated_at = @at
  WHERE id = @deliveryId AND status = 'pending' AND EXISTS (SELECT 1 FROM notification_subscriptions s
    WHERE s.id = deliveries.subscription_id AND s.hold_state <> 'active')`;
