import type { Db } from "./database.js";
import type { EndpointHealthStore } from "./endpoint-health-store.js";

export const deliveryStatuses = ["pending", "succeeded", "failed"] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];
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
  createdAt: number;
  updatedAt: number;
}

export interface DeliveryWithEvent extends DeliveryRecord {
  event: unknown;
}

export type NewDelivery = Pick<
  DeliveryWithEvent,
  "id" | "eventId" | "eventType" | "subscriptionId" | "workspaceId" | "logId" | "event" | "createdAt"
>;

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

/** The filters of ListDeliveries, already validated. */
export interface DeliveryFilter {
  workspaceId: string;
  subscriptionId?: string | undefined;
  status?: DeliveryStatus | undefined;
  eventId?: string | undefined;
}

const deliveryColumns = `id, event_id AS eventId, event_type AS eventType, subscription_id AS subscriptionId,
  workspace_id AS workspaceId, log_id AS logId, status, attempts, last_error AS lastError,
  created_at AS createdAt, updated_at AS updatedAt`;

const attemptColumns = `delivery_id AS deliveryId, series, attempt, started_at AS startedAt,
  duration_ms AS durationMs, outcome, http_status AS httpStatus, response_snippet AS responseSnippet, error`;

type DeliveryRow = DeliveryRecord & { eventJson: string };

/** The delivery log (issue 5, item 7): deliveries and each of their attempts. */
export class DeliveriesStore {
  private readonly statements;

  constructor(
    private readonly db: Db,
    private readonly endpointHealth: EndpointHealthStore,
  ) {
    this.statements = {
      statusOf: db.prepare("SELECT status, subscription_id AS subscriptionId FROM deliveries WHERE id = ?"),
      insert: db.prepare(
        `INSERT INTO deliveries (id, event_id, event_type, subscription_id, workspace_id, log_id, event_json,
           status, created_at, updated_at)
         VALUES (@id, @eventId, @eventType, @subscriptionId, @workspaceId, @logId, @eventJson, 'pending',
           @createdAt, @createdAt)
         ON CONFLICT (event_id, subscription_id) DO NOTHING`,
      ),
      byEvent: db.prepare(
        `SELECT ${deliveryColumns}, event_json AS eventJson FROM deliveries
         WHERE event_id = ? AND subscription_id = ?`,
      ),
      byId: db.prepare(`SELECT ${deliveryColumns}, event_json AS eventJson FROM deliveries WHERE id = ?`),
      attemptsOf: db.prepare(
        `SELECT ${attemptColumns} FROM delivery_attempts WHERE delivery_id = ? ORDER BY series, attempt`,
      ),
      upsertAttempt: db.prepare(
        `INSERT INTO delivery_attempts (delivery_id, series, attempt, started_at, duration_ms, outcome,
           http_status, response_snippet, error)
         VALUES (@deliveryId, @series, @attempt, @startedAt, @durationMs, @outcome, @httpStatus,
           @responseSnippet, @error)
         ON CONFLICT (delivery_id, series, attempt) DO UPDATE SET started_at = excluded.started_at,
           duration_ms = excluded.duration_ms, outcome = excluded.outcome, http_status = excluded.http_status,
           response_snippet = excluded.response_snippet, error = excluded.error`,
      ),
      settle: db.prepare(
        `UPDATE deliveries SET status = @status, last_error = @error, updated_at = @now,
           attempts = (SELECT count(*) FROM delivery_attempts WHERE delivery_id = @id)
         WHERE id = @id`,
      ),
      reopen: db.prepare(
        "UPDATE deliveries SET status = 'pending', updated_at = ? WHERE id = ? AND status != 'pending'",
      ),
      lastSeries: db.prepare("SELECT max(series) AS series FROM delivery_attempts WHERE delivery_id = ?"),
    };
  }

  /**
   * The delivery of this event to this subscription, created on first call (D19: one per pair). A replayed
   * or retried fan-out gets the first row back, with its id and event, and never a second delivery.
   */
  async createOnce(delivery: NewDelivery): Promise<DeliveryWithEvent> {
    this.statements.insert.run({ ...delivery, eventJson: JSON.stringify(delivery.event) });
    const row = this.statements.byEvent.get(delivery.eventId, delivery.subscriptionId) as DeliveryRow;
    return withEvent(row);
  }

  async get(id: string): Promise<DeliveryWithEvent | undefined> {
    const row = this.statements.byId.get(id) as DeliveryRow | undefined;
    return row && withEvent(row);
  }

  /** Newest first; the event bodies stay out of lists. */
  async list(filter: DeliveryFilter, limit: number): Promise<DeliveryRecord[]> {
    const where = ["workspace_id = @workspaceId"];
    if (filter.subscriptionId !== undefined) where.push("subscription_id = @subscriptionId");
    if (filter.status !== undefined) where.push("status = @status");
    if (filter.eventId !== undefined) where.push("event_id = @eventId");
    return this.db
      .prepare(
        `SELECT ${deliveryColumns} FROM deliveries WHERE ${where.join(" AND ")}
         ORDER BY created_at DESC, id DESC LIMIT @limit`,
      )
      .all({ ...filter, limit }) as DeliveryRecord[];
  }

  async attemptsOf(deliveryId: string): Promise<DeliveryAttemptRecord[]> {
    return this.statements.attemptsOf.all(deliveryId) as DeliveryAttemptRecord[];
  }

  /**
   * Records one attempt and where the delivery now stands, together: the log never shows an attempt the
   * status does not count. Recording the same attempt again (an activity retried after its write) replaces it.
   * A delivery that settles here also extends or ends its endpoint's run of failures (D35), in the same
   * transaction and only on the change of status, so a write repeated by a retry counts nothing twice.
   * True when that counted a failure.
   */
  async recordAttempt(attempt: DeliveryAttemptRecord, status: DeliveryStatus): Promise<boolean> {
    // IMMEDIATE: it reads before it writes, and a deferred transaction that another process's commit
    // overtakes in between fails at once (SQLITE_BUSY) instead of waiting: the attempt, already sent,
    // would be sent again by the activity's retry.
    return this.db
      .transaction(() => {
        const before = this.statements.statusOf.get(attempt.deliveryId) as
          | { status: DeliveryStatus; subscriptionId: string }
          | undefined;
        const now = attempt.startedAt + attempt.durationMs;
        this.statements.upsertAttempt.run(attempt);
        this.statements.settle.run({ id: attempt.deliveryId, status, error: attempt.error, now });
        if (!before || before.status === status) return false;
        return this.endpointHealth.settled(before.subscriptionId, status, now, attempt.error);
      })
      .immediate();
  }

  /**
   * Opens the next attempt series of a settled delivery (redelivery, D19) and returns its number, or
   * undefined while a series is still running: two redeliveries at once can never share a series.
   */
  async reopen(id: string, now: number): Promise<number | undefined> {
    return this.db.transaction(() => {
      if (this.statements.reopen.run(now, id).changes === 0) return undefined;
      const { series } = this.statements.lastSeries.get(id) as { series: number | null };
      return (series ?? 1) + 1;
    })();
  }
}

function withEvent({ eventJson, ...delivery }: DeliveryRow): DeliveryWithEvent {
  return { ...delivery, event: JSON.parse(eventJson) };
}
