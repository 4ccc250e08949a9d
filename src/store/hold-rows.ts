import type { HoldBounds, HoldState } from "../domain/hold-policy.js";
import {
  type WatchedEndpoint,
  type WatchedEndpointRow,
  watchedEndpointFromRow,
} from "./endpoint-health-rows.js";

/**
 * D36's bookkeeping as both stores keep it (D32: the same columns in SQLite and PostgreSQL), with `@name`
 * parameters: a subscription's hold state, the run of exhausted deliveries that holds it, and the queue
 * of `held` deliveries a drain empties, oldest first by event time.
 */

/** How many deliveries in a row ending failed after their whole schedule hold their endpoint (D36). */
export const exhaustionsThatHold = 3;

/** Why a held delivery ended failed without being sent: the start of its last_error. */
export const holdLimitReason = "hold_limit";
export const subscriptionDisabledReason = "subscription_disabled";

/** A subscription as the hold watcher judges it: never its secret. */
export interface HoldStatus extends WatchedEndpoint {
  state: HoldState;
  /** When the current hold began; null while active. */
  heldAt: number | null;
  /** The D35 run's since, which the notices and the hold's sweep of exhausted deliveries read. */
  failingSince: number | null;
  lastFailure: string | null;
}

/** A held delivery as the probe and the drain send it: where its attempt log stands. */
export interface HeldDelivery {
  id: string;
  subscriptionId: string;
  workspaceId: string;
  eventAt: number;
  /** Its latest series and that series' latest attempt; 0 and 0 before any attempt. */
  lastSeries: number;
  lastAttempt: number;
  /** When its latest attempt started; null before any. */
  lastAttemptAt: number | null;
}

const holdable = "('webhook', 'slack')";

export const holdSql = {
  status: `SELECT id, workspace_id, channel, config_json, active, deleted_at, hold_state, held_at, failing_since,
      last_failure
    FROM notification_subscriptions WHERE id = @id`,
  heldCount: `SELECT count(*) AS count FROM deliveries WHERE subscription_id = @id AND status = 'held'`,
  /** Oldest first by event time (D36), with where each one's attempt log stands. */
  oldestHeld: `SELECT d.id, d.subscription_id AS "subscriptionId", d.workspace_id AS "workspaceId",
      d.event_at AS "eventAt",
      coalesce(a.series, 0) AS "lastSeries", coalesce(a.attempt, 0) AS "lastAttempt",
      a.started_at AS "lastAttemptAt"
    FROM deliveries d
    LEFT JOIN delivery_attempts a ON a.delivery_id = d.id AND (a.series, a.attempt) = (
      SELECT b.series, b.attempt FROM delivery_attempts b WHERE b.delivery_id = d.id
      ORDER BY b.series DESC, b.attempt DESC LIMIT 1)
    WHERE d.subscription_id = @id AND d.status = 'held'
    ORDER BY d.event_at, d.id LIMIT @limit`,
  /** A success or a failure the receiver answered (a 4xx) breaks the run of exhaustions (D36). */
  breakRun: `UPDATE notification_subscriptions SET exhausted_in_row = 0 WHERE id = @id AND exhausted_in_row > 0`,
  markExhausted: "UPDATE deliveries SET exhausted = 1 WHERE id = @deliveryId",
  /** A series that ended while its endpoint was held: it waits with the others instead (D36). */
  keepHeld: `UPDATE deliveries SET status = 'held' WHERE id = @deliveryId AND status = 'failed'`,
  countExhausted: `UPDATE notification_subscriptions SET exhausted_in_row = exhausted_in_row + 1
    WHERE id = @id AND channel IN ${holdable} AND active = 1 AND deleted_at IS NULL
    RETURNING exhausted_in_row AS "inRow", hold_state AS state`,
  hold: `UPDATE notification_subscriptions SET hold_state = 'held', held_at = @at, exhausted_in_row = 0
    WHERE id = @id AND hold_state <> 'held'`,
  /** What the outage kept from the receiver since its failure run began waits for the drain too. */
  takeBackExhausted: `UPDATE deliveries SET status = 'held', updated_at = @at
    WHERE subscription_id = @id AND status = 'failed' AND exhausted = 1
      AND updated_at >= coalesce((SELECT failing_since FROM notification_subscriptions WHERE id = @id), @at)`,
  release: `UPDATE notification_subscriptions SET hold_state = 'draining' WHERE id = @id AND hold_state = 'held'`,
  end: `UPDATE notification_subscriptions SET hold_state = 'active', held_at = NULL, exhausted_in_row = 0
    WHERE id = @id AND hold_state <> 'active'`,
  /** The newest held delivery past the count bound, when there is one: it and all older go (D36). */
  firstBeyond: `SELECT event_at AS "eventAt", id FROM deliveries WHERE subscription_id = @id AND status = 'held'
    ORDER BY event_at DESC, id DESC LIMIT 1 OFFSET @maxDeliveries`,
  /** Older than the age bound, or at or before the first past the count bound: the oldest go first (D36). */
  trim: `UPDATE deliveries SET status = 'failed', last_error = @error, updated_at = @now
    WHERE subscription_id = @id AND status = 'held'
      AND (event_at < @oldestKept OR (event_at, id) <= (@beyondAt, @beyondId))`,
  failAll: `UPDATE deliveries SET status = 'failed', last_error = @error, updated_at = @now
    WHERE subscription_id = @id AND status = 'held'`,
} as const;

/** A row of holdSql.status. */
export interface HoldRow extends WatchedEndpointRow {
  hold_state: HoldState;
  held_at: number | null;
  failing_since: number | null;
  last_failure: string | null;
}

export function holdStatusFromRow(row: HoldRow): HoldStatus {
  return {
    ...watchedEndpointFromRow(row),
    state: row.hold_state,
    heldAt: row.held_at,
    failingSince: row.failing_since,
    lastFailure: row.last_failure,
  };
}

/** The last_error of a held delivery the hold's bounds ended (D36). */
export function holdLimitError(bounds: HoldBounds): string {
  const days = Math.round((bounds.maxAgeMs / 86_400_000) * 100) / 100;
  return (
    `${holdLimitReason}: held past the hold's bounds (${bounds.maxDeliveries} deliveries or ${days} days); ` +
    "it can be redelivered or recovered"
  );
}

export const subscriptionDisabledError =
  `${subscriptionDisabledReason}: the subscription was disabled while this delivery was held; ` +
  "it can be redelivered or recovered once the endpoint is enabled";
