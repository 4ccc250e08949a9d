/**
 * The delivery log as both stores keep it (D19, D32): its records, which both stores answer with, and the
 * rows and statements they write alike, with `@name` parameters (the same columns in SQLite and PostgreSQL).
 * Column aliases are quoted so that PostgreSQL keeps their case and a row is already its record.
 */

/** `held`: recorded while its endpoint is held (D36), sent once the endpoint recovers. */
export const deliveryStatuses = ["pending", "held", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];
/** The classes of the last attempt's HTTP status the list filters by (D40); `none`: no HTTP answer. */
export const httpStatusClasses = ["2xx", "3xx", "4xx", "5xx", "none"] as const;
export type HttpStatusClass = (typeof httpStatusClasses)[number];
export type AttemptOutcome = "succeeded" | "retrying" | "failed";

/**
 * One event for one subscription (D19). Its id is the service-delivery-id and Idempotency-Key; the event
 * is kept exactly as first built, so every attempt and every redelivery sends the same event.
 */
export interface DeliveryRecord {
  id: string;
  eventId: string;
  eventType: string;
  subscriptionId: string;
  workspaceId: string;
  /** The log entry the event describes; null for a test event. */
  logId: string | null;
  status: DeliveryStatus;
  /** Attempts over all series. */
  attempts: number;
  lastError: string | null;
  /** The HTTP status of the last attempt; null before any, or when it had no HTTP answer. */
  lastHttpStatus: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface DeliveryWithEvent extends DeliveryRecord {
  event: unknown;
}

export type NewDelivery = Pick<
  DeliveryWithEvent,
  "id" | "eventId" | "eventType" | "subscriptionId" | "workspaceId" | "logId" | "event" | "createdAt"
> & {
  /**
   * D36: false for a delivery that must go now whatever its endpoint's state (the Test RPC's sample);
   * otherwise a delivery made while its endpoint is held or draining is recorded `held`.
   */
  holdable?: boolean;
};

/** The parameters of deliverySql.insert, both stores': the event as JSON, its time, whether it may be held. */
export function insertParameters(delivery: NewDelivery): Record<string, unknown> {
  const { timestamp } = delivery.event as { timestamp?: unknown };
  return {
    ...delivery,
    eventJson: JSON.stringify(delivery.event),
    // D36: a drain goes oldest first by the event's time (an execution's end); a sample has its own.
    eventAt: typeof timestamp === "number" ? timestamp : delivery.createdAt,
    holdable: delivery.holdable === false ? 0 : 1,
  };
}

/** One attempt of one series; a redelivery starts series + 1 (D19: every attempt is recorded). */
export interface DeliveryAttemptRecord {
  deliveryId: string;
  series: number;
  attempt: number;
  startedAt: number;
  durationMs: number;
  outcome: AttemptOutcome;
  httpStatus: number | null;
  /** The first 1 KB of the response. */
  responseSnippet: string | null;
  error: string | null;
}

/** How an attempt settled its delivery, as D36's hold counts it. */
export interface AttemptSettling {
  /** The delivery ended failed after its whole schedule on retryable outcomes. */
  exhausted?: boolean;
  /** A drain sent it (D36). */
  drained?: boolean;
}

/** One attempt to record with the status it leaves its delivery in. */
export interface RecordedAttempt extends AttemptSettling {
  attempt: DeliveryAttemptRecord;
  status: DeliveryStatus;
}

/** Where an attempt stands in its delivery's log; pages of attempts are read by it (D40). */
export type AttemptKey = Pick<DeliveryAttemptRecord, "series" | "attempt">;

/** What asking for a delivery's next attempt series came to: its number, or why none opened (D19, D40). */
export type Reopening =
  | { series: number }
  | { refused: "running" }
  | { refused: "series_limit"; lastSeries: number };

/** Where a delivery stands in the list's keyset order (D40): newest first by creation, then id. */
export type DeliveryKey = Pick<DeliveryRecord, "createdAt" | "id">;

/** The filters of ListDeliveries, already validated (D40). */
export interface DeliveryFilter {
  workspaceId: string;
  subscriptionId?: string | undefined;
  status?: DeliveryStatus | undefined;
  eventId?: string | undefined;
  eventType?: string | undefined;
  /** Inclusive bounds on createdAt, as D9's on a log entry's startedAt. */
  createdFrom?: number | undefined;
  createdTo?: number | undefined;
  httpStatusClass?: HttpStatusClass | undefined;
  /** The keyset: only deliveries after this one, in the list's order (the last of the page before). */
  after?: DeliveryKey | undefined;
}

const deliveryColumns = `id, event_id AS "eventId", event_type AS "eventType", subscription_id AS "subscriptionId",
  workspace_id AS "workspaceId", log_id AS "logId", status, attempts, last_error AS "lastError",
  last_http_status AS "lastHttpStatus", created_at AS "createdAt", updated_at AS "updatedAt"`;

const attemptColumns = `delivery_id AS "deliveryId", series, attempt, started_at AS "startedAt",
  duration_ms AS "durationMs", outcome, http_status AS "httpStatus", response_snippet AS "responseSnippet", error`;

/**
 * D19: one delivery per (event, subscription); a second insert of the pair leaves the first. D36: made
 * `held` while its endpoint is held or draining, decided in the insert itself from the subscription's row,
 * so that a drain that finds nothing left and ends the hold can never miss it. `lock` is PostgreSQL's
 * `FOR SHARE`: the insert then waits for a drain's end, and reads the state it left.
 */
export function deliveryInsertSql(lock: string): string {
  return `INSERT INTO deliveries (id, event_id, event_type, subscription_id, workspace_id, log_id, event_json,
      status, created_at, updated_at, event_at)
    SELECT CAST(@id AS text), CAST(@eventId AS text), CAST(@eventType AS text), s.id,
      CAST(@workspaceId AS text), CAST(@logId AS text), CAST(@eventJson AS text),
      CASE WHEN s.hold_state <> 'active' AND @holdable = 1 THEN 'held' ELSE 'pending' END,
      CAST(@createdAt AS bigint), CAST(@createdAt AS bigint), CAST(@eventAt AS bigint)
    FROM notification_subscriptions s WHERE s.id = @subscriptionId ${lock}
    ON CONFLICT (event_id, subscription_id) DO NOTHING`;
}

export const deliverySql = {
  insert: deliveryInsertSql(""),
  byEvent: `SELECT ${deliveryColumns}, event_json AS "eventJson" FROM deliveries
    WHERE event_id = @eventId AND subscription_id = @subscriptionId`,
  byId: `SELECT ${deliveryColumns}, event_json AS "eventJson" FROM deliveries WHERE id = @id`,
  attemptsOf: `SELECT ${attemptColumns} FROM delivery_attempts WHERE delivery_id = @deliveryId
    ORDER BY series, attempt`,
  /** D40: a page of attempts, newest first, read along the primary key. */
  newestAttempts: `SELECT ${attemptColumns} FROM delivery_attempts WHERE delivery_id = @deliveryId
    ORDER BY series DESC, attempt DESC LIMIT @limit`,
  attemptsBefore: `SELECT ${attemptColumns} FROM delivery_attempts WHERE delivery_id = @deliveryId
      AND (series, attempt) < (@series, @attempt)
    ORDER BY series DESC, attempt DESC LIMIT @limit`,
  /** Recording the same attempt again (an activity retried after its write) replaces it. */
  upsertAttempt: `INSERT INTO delivery_attempts (delivery_id, series, attempt, started_at, duration_ms, outcome,
      http_status, response_snippet, error)
    VALUES (@deliveryId, @series, @attempt, @startedAt, @durationMs, @outcome, @httpStatus,
      @responseSnippet, @error)
    ON CONFLICT (delivery_id, series, attempt) DO UPDATE SET started_at = excluded.started_at,
      duration_ms = excluded.duration_ms, outcome = excluded.outcome, http_status = excluded.http_status,
      response_snippet = excluded.response_snippet, error = excluded.error`,
  /**
   * Opens the next series of a settled delivery (D19) while it has had fewer than @maxSeries (D40: the
   * first and at most 20 redeliveries). A delivery settled before any attempt was recorded is in series 1.
   * A held one is not settled: its endpoint's release sends it (D36).
   */
  reopen: `UPDATE deliveries SET status = 'pending', updated_at = @now
    WHERE id = @id AND status IN ('succeeded', 'failed')
      AND coalesce((SELECT max(series) FROM delivery_attempts WHERE delivery_id = @id), 1) < @maxSeries`,
  /** Where a delivery that did not reopen stands: still running, or at its last series. */
  seriesOf: `SELECT status, coalesce((SELECT max(series) FROM delivery_attempts WHERE delivery_id = @id), 1)
      AS series
    FROM deliveries WHERE id = @id`,
  /** The delivery's status after an attempt, counting its attempts over all series, and its last's HTTP status. */
  settle: `UPDATE deliveries SET status = @status, last_error = @error, updated_at = @now,
      attempts = (SELECT count(*) FROM delivery_attempts WHERE delivery_id = @id),
      last_http_status = (SELECT http_status FROM delivery_attempts WHERE delivery_id = @id
        ORDER BY series DESC, attempt DESC LIMIT 1)
    WHERE id = @id`,
} as const;

/**
 * D37: the failed deliveries of one subscription created in a window, which a recovery job sends again.
 * Both read along deliveries_by_subscription_status.
 */
export interface RecoveryWindow {
  subscriptionId: string;
  /** Inclusive bounds on createdAt. */
  since: number;
  until: number;
}

export const recoverySql = {
  /** How many, counted no further than @limit: one more than a job takes tells that more remain. */
  count: `SELECT CAST(count(*) AS INTEGER) AS "count" FROM (SELECT 1 FROM deliveries
      WHERE subscription_id = @subscriptionId AND status = 'failed'
        AND created_at >= @since AND created_at <= @until
      LIMIT @limit) AS failed_in_window`,
  /** Oldest first, in (created_at, id) order after @afterCreatedAt, @afterId: a job's next page. */
  page: `SELECT id, created_at AS "createdAt" FROM deliveries
    WHERE subscription_id = @subscriptionId AND status = 'failed'
      AND created_at >= @since AND created_at <= @until AND (created_at, id) > (@afterCreatedAt, @afterId)
    ORDER BY created_at, id LIMIT @limit`,
} as const;

/** The parameters of recoverySql.page: the window, and the first page after nothing in it. */
export function recoveryPageParams(window: RecoveryWindow, after: DeliveryKey | undefined, limit: number) {
  const from = after ?? { createdAt: window.since, id: "" };
  return { ...window, afterCreatedAt: from.createdAt, afterId: from.id, limit };
}

/** The HTTP statuses of each class, inclusive; `none` is a null status. */
const statusClassBounds: Record<Exclude<HttpStatusClass, "none">, [number, number]> = {
  "2xx": [200, 299],
  "3xx": [300, 399],
  "4xx": [400, 499],
  "5xx": [500, 599],
};

/**
 * The list query of ListDeliveries (D40), in both stores' `@name` dialect: the filters present (already
 * validated), newest first in (created_at, id) order, which the index led by the equality filters gives
 * without sorting. One statement per combination of filters present, whatever the values; the event
 * bodies stay out of lists.
 */
export function deliveryListQuery(
  filter: DeliveryFilter,
  limit: number,
): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { workspaceId: filter.workspaceId, limit };
  const where = ["workspace_id = @workspaceId"];
  const equal = (column: string, name: string, value: string | undefined) => {
    if (value === undefined) return;
    where.push(`${column} = @${name}`);
    params[name] = value;
  };
  equal("subscription_id", "subscriptionId", filter.subscriptionId);
  equal("status", "status", filter.status);
  equal("event_id", "eventId", filter.eventId);
  equal("event_type", "eventType", filter.eventType);
  if (filter.createdFrom !== undefined) {
    where.push("created_at >= @createdFrom");
    params.createdFrom = filter.createdFrom;
  }
  if (filter.createdTo !== undefined) {
    where.push("created_at <= @createdTo");
    params.createdTo = filter.createdTo;
  }
  if (filter.httpStatusClass === "none") where.push("last_http_status IS NULL");
  else if (filter.httpStatusClass !== undefined) {
    where.push("last_http_status BETWEEN @lowestStatus AND @highestStatus");
    [params.lowestStatus, params.highestStatus] = statusClassBounds[filter.httpStatusClass];
  }
  if (filter.after !== undefined) {
    where.push("(created_at, id) < (@afterCreatedAt, @afterId)");
    params.afterCreatedAt = filter.after.createdAt;
    params.afterId = filter.after.id;
  }
  const sql = `SELECT ${deliveryColumns} FROM deliveries WHERE ${where.join(" AND ")}
    ORDER BY created_at DESC, id DESC LIMIT @limit`;
  return { sql, params };
}

/** A row of deliverySql.byId or byEvent. */
export type DeliveryRow = DeliveryRecord & { eventJson: string };

export function deliveryWithEvent({ eventJson, ...delivery }: DeliveryRow): DeliveryWithEvent {
  return { ...delivery, event: JSON.parse(eventJson) };
}

/** A row of deliverySql.seriesOf: the delivery's status and its last series. */
export interface SeriesRow {
  status: DeliveryStatus;
  series: number;
}

/** What deliverySql.reopen came to, read with the delivery's series after it (D19, D40). */
export function reopening(opened: boolean, { status, series }: SeriesRow): Reopening {
  if (opened) return { series: series + 1 };
  const settled = status === "succeeded" || status === "failed";
  return settled ? { refused: "series_limit", lastSeries: series } : { refused: "running" };
}
