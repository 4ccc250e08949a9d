import type { Statement } from "better-sqlite3";
import type { Db } from "./database.js";
import {
  type AttemptKey,
  type AttemptSettling,
  type DeliveryAttemptRecord,
  type DeliveryFilter,
  type DeliveryKey,
  type DeliveryRecord,
  type DeliveryRow,
  type DeliveryStatus,
  type DeliveryWithEvent,
  deliveryListQuery,
  deliverySql,
  deliveryWithEvent,
  insertParameters,
  type NewDelivery,
  type RecordedAttempt,
  type RecoveryWindow,
  type Reopening,
  recoveryPageParams,
  recoverySql,
  reopening,
  type SeriesRow,
} from "./delivery-rows.js";
import type { EndpointHealthStore } from "./endpoint-health-store.js";
import type { HoldsStore } from "./holds-store.js";

/** The delivery log (issue 5, item 7): deliveries and each of their attempts. */
export class DeliveriesStore {
  private readonly statements;
  /** One list statement per combination of filters present (deliveryListQuery), prepared once. */
  private readonly lists = new Map<string, Statement>();

  constructor(
    private readonly db: Db,
    private readonly endpointHealth: EndpointHealthStore,
    private readonly holds: HoldsStore,
  ) {
    this.statements = {
      statusOf: db.prepare("SELECT status, subscription_id AS subscriptionId FROM deliveries WHERE id = ?"),
      insert: db.prepare(deliverySql.insert),
      byEvent: db.prepare(deliverySql.byEvent),
      byId: db.prepare(deliverySql.byId),
      attemptsOf: db.prepare(deliverySql.attemptsOf),
      newestAttempts: db.prepare(deliverySql.newestAttempts),
      attemptsBefore: db.prepare(deliverySql.attemptsBefore),
      upsertAttempt: db.prepare(deliverySql.upsertAttempt),
      settle: db.prepare(deliverySql.settle),
      reopen: db.prepare(deliverySql.reopen),
      seriesOf: db.prepare(deliverySql.seriesOf),
      countFailed: db.prepare(recoverySql.count),
      failedPage: db.prepare(recoverySql.page),
    };
  }

  /**
   * The delivery of this event to this subscription, created on first call (D19: one per pair). A replayed
   * or retried fan-out gets the first row back, with its id and event, and never a second delivery.
   */
  async createOnce(delivery: NewDelivery): Promise<DeliveryWithEvent> {
    this.statements.insert.run(insertParameters(delivery));
    const row = this.statements.byEvent.get(delivery) as DeliveryRow;
    return deliveryWithEvent(row);
  }

  async get(id: string): Promise<DeliveryWithEvent | undefined> {
    const row = this.statements.byId.get({ id }) as DeliveryRow | undefined;
    return row && deliveryWithEvent(row);
  }

  /**
   * Newest first, after `filter.after` (D40); the event bodies stay out of lists. `signal`, the caller
   * leaving, ends PostgreSQL's read (D46); better-sqlite3 cannot interrupt a statement, so here the index
   * and `limit` bound it.
   */
  async list(filter: DeliveryFilter, limit: number, _signal?: AbortSignal): Promise<DeliveryRecord[]> {
    const { sql, params } = deliveryListQuery(filter, limit);
    let statement = this.lists.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.lists.set(sql, statement);
    }
    return statement.all(params) as DeliveryRecord[];
  }

  /** The plan of the list query, for tests that hold the indexes to their promise (D40). */
  async explainList(filter: DeliveryFilter, limit: number): Promise<string[]> {
    const { sql, params } = deliveryListQuery(filter, limit);
    return (this.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map(
      (row) => row.detail,
    );
  }

  /** D37: the failed deliveries of the window, counted no further than `limit`. */
  async countFailed(window: RecoveryWindow, limit: number): Promise<number> {
    return (this.statements.countFailed.get({ ...window, limit }) as { count: number }).count;
  }

  /** D37: the next `limit` failed deliveries of the window after `after`, oldest first. */
  async failedPage(
    window: RecoveryWindow,
    after: DeliveryKey | undefined,
    limit: number,
  ): Promise<DeliveryKey[]> {
    return this.statements.failedPage.all(recoveryPageParams(window, after, limit)) as DeliveryKey[];
  }

  async attemptsOf(deliveryId: string): Promise<DeliveryAttemptRecord[]> {
    return this.statements.attemptsOf.all({ deliveryId }) as DeliveryAttemptRecord[];
  }

  /** D40: at most `limit` attempts, newest first: the newest of all, or the newest older than `before`. */
  async newestAttempts(
    deliveryId: string,
    limit: number,
    before?: AttemptKey,
  ): Promise<DeliveryAttemptRecord[]> {
    const page = before
      ? this.statements.attemptsBefore.all({ deliveryId, limit, ...before })
      : this.statements.newestAttempts.all({ deliveryId, limit });
    return page as DeliveryAttemptRecord[];
  }

  /**
   * Records one attempt and where the delivery now stands, together: the log never shows an attempt the
   * status does not count. Recording the same attempt again (an activity retried after its write) replaces it.
   * A delivery that settles here also extends or ends its endpoint's run of failures (D35), in the same
   * transaction and only on the change of status, so a write repeated by a retry counts nothing twice.
   * True when that counted a failure.
   */
  async recordAttempt(
    attempt: DeliveryAttemptRecord,
    status: DeliveryStatus,
    settling: AttemptSettling = {},
  ): Promise<boolean> {
    // IMMEDIATE: it reads before it writes, and a deferred transaction that another process's commit
    // overtakes in between fails at once (SQLITE_BUSY) instead of waiting: the attempt, already sent,
    // would be sent again by the activity's retry.
    return this.db.transaction(() => this.record({ attempt, status, ...settling })).immediate();
  }

  /**
   * Records a drain's attempts (D36) in one transaction, each as recordAttempt would, in order: a drain
   * sends hundreds a second and writes them in batches. How many failures that counted (D35).
   */
  async recordAttempts(records: readonly RecordedAttempt[]): Promise<number> {
    return this.db.transaction(() => records.filter((record) => this.record(record)).length).immediate();
  }

  private record({ attempt, status, exhausted = false, drained = false }: RecordedAttempt): boolean {
    const before = this.statements.statusOf.get(attempt.deliveryId) as
      | { status: DeliveryStatus; subscriptionId: string }
      | undefined;
    const now = attempt.startedAt + attempt.durationMs;
    this.statements.upsertAttempt.run(attempt);
    this.statements.settle.run({ id: attempt.deliveryId, status, error: attempt.error, now });
    if (!before || before.status === status) return false;
    const counted = this.endpointHealth.settled(before.subscriptionId, status, now, attempt.error);
    const { subscriptionId } = before;
    this.holds.settled({
      subscriptionId,
      deliveryId: attempt.deliveryId,
      status,
      exhausted,
      drained,
      at: now,
    });
    return counted;
  }

  /**
   * Opens the next attempt series of a settled delivery (redelivery, D19) and returns its number; refused
   * while a series is still running, so two redeliveries at once can never share a series, and once the
   * delivery has had `maxSeries` (D40). Undefined for an unknown delivery.
   */
  async reopen(id: string, now: number, maxSeries: number): Promise<Reopening | undefined> {
    // The update takes the write lock first: the series read after it is the one it opened after.
    return this.db.transaction(() => {
      const opened = this.statements.reopen.run({ id, now, maxSeries }).changes > 0;
      const row = this.statements.seriesOf.get({ id }) as SeriesRow | undefined;
      return row && reopening(opened, row);
    })();
  }
}
