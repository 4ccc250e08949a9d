import type { DeliveriesStore } from "../deliveries-store.js";
import type {
  AttemptKey,
  AttemptSettling,
  DeliveryAttemptRecord,
  DeliveryFilter,
  DeliveryKey,
  DeliveryRecord,
  DeliveryStatus,
  DeliveryWithEvent,
  NewDelivery,
  RecordedAttempt,
  RecoveryWindow,
  Reopening,
} from "../delivery-rows.js";
import {
  type DeliveryRow,
  deliveryInsertSql,
  deliveryListQuery,
  deliverySql,
  deliveryWithEvent,
  insertParameters,
  recoveryPageParams,
  recoverySql,
  reopening,
  type SeriesRow,
} from "../delivery-rows.js";
import type { StoreArea } from "../store.js";
import { deliveriesOverTime } from "../tenant-reads.js";
import { type PostgresPool, type Queryable, withTransaction } from "./database.js";
import type { PostgresEndpointHealthStore } from "./endpoint-health-store.js";
import type { PostgresHoldsStore } from "./holds-store.js";
import { namedStatement } from "./named-parameters.js";
import { TenantReads } from "./tenant-reads.js";

const statements = {
  insert: namedStatement(deliveryInsertSql("FOR SHARE OF s")),
  byEvent: namedStatement(deliverySql.byEvent),
  byId: namedStatement(deliverySql.byId),
  attemptsOf: namedStatement(deliverySql.attemptsOf),
  newestAttempts: namedStatement(deliverySql.newestAttempts),
  attemptsBefore: namedStatement(deliverySql.attemptsBefore),
  upsertAttempt: namedStatement(deliverySql.upsertAttempt),
  settle: namedStatement(deliverySql.settle),
  // Locked, so that two writes of one delivery's attempts (a retried activity and the try it retries)
  // take turns: the second sees the status the first left, and no settling is counted twice (D35).
  statusOf: namedStatement(
    `SELECT status, subscription_id AS "subscriptionId" FROM deliveries WHERE id = @id FOR UPDATE`,
  ),
  // One statement: a second redelivery waits for the first's row lock, then finds the delivery pending.
  reopen: namedStatement(
    `${deliverySql.reopen}
     RETURNING 'pending' AS status,
       coalesce((SELECT max(series) FROM delivery_attempts WHERE delivery_id = @id), 1) AS series`,
  ),
  seriesOf: namedStatement(deliverySql.seriesOf),
  countFailed: namedStatement(recoverySql.count),
  failedPage: namedStatement(recoverySql.page),
};

/**
 * The delivery log on PostgreSQL (D19, D32): SQLite's rows and statements (delivery-rows.ts), as
 * promises, with the same atomicity across processes and machines.
 */
export class PostgresDeliveriesStore implements StoreArea<DeliveriesStore> {
  /** `reads` (D46) defaults to the main pool, for tools and tests that open one pool only. */
  constructor(
    private readonly pool: PostgresPool,
    private readonly endpointHealth: PostgresEndpointHealthStore,
    private readonly holds: PostgresHoldsStore,
    private readonly reads = TenantReads.on(pool),
  ) {}

  /**
   * The delivery of this event to this subscription, created on first call (D19: one per pair). The
   * insert waits for a concurrent insert of the same pair to end; the read after it is a statement of its
   * own, so it sees the row whichever process wrote it.
   */
  async createOnce(delivery: NewDelivery): Promise<DeliveryWithEvent> {
    await this.pool.query(statements.insert(insertParameters(delivery)));
    const { rows } = await this.pool.query<DeliveryRow>(statements.byEvent(delivery));
    return deliveryWithEvent(rows[0] as DeliveryRow);
  }

  async get(id: string): Promise<DeliveryWithEvent | undefined> {
    const { rows } = await this.pool.query<DeliveryRow>(statements.byId({ id }));
    return rows[0] && deliveryWithEvent(rows[0]);
  }

  /** Newest first, after `filter.after` (D40), on the tenant reads' pool within its time (D46). */
  async list(filter: DeliveryFilter, limit: number, signal?: AbortSignal): Promise<DeliveryRecord[]> {
    const { sql, params } = deliveryListQuery(filter, limit);
    const { rows } = await this.reads.run(signal, deliveriesOverTime, (client) =>
      client.query<DeliveryRecord>(namedStatement(sql)(params)),
    );
    return rows;
  }

  /** The plan of the list query, for tests that hold the indexes to their promise (D40). */
  async explainList(filter: DeliveryFilter, limit: number): Promise<string[]> {
    const { sql, params } = deliveryListQuery(filter, limit);
    const { text, values } = namedStatement(sql)(params);
    const { rows } = await this.pool.query<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, values);
    return rows.map((row) => row["QUERY PLAN"]);
  }

  /** D37: the failed deliveries of the window, counted no further than `limit`. */
  async countFailed(window: RecoveryWindow, limit: number): Promise<number> {
    const { rows } = await this.pool.query<{ count: number }>(statements.countFailed({ ...window, limit }));
    return rows[0]?.count ?? 0;
  }

  /** D37: the next `limit` failed deliveries of the window after `after`, oldest first. */
  async failedPage(
    window: RecoveryWindow,
    after: DeliveryKey | undefined,
    limit: number,
  ): Promise<DeliveryKey[]> {
    const page = statements.failedPage(recoveryPageParams(window, after, limit));
    return (await this.pool.query<DeliveryKey>(page)).rows;
  }

  async attemptsOf(deliveryId: string): Promise<DeliveryAttemptRecord[]> {
    return (await this.pool.query<DeliveryAttemptRecord>(statements.attemptsOf({ deliveryId }))).rows;
  }

  async newestAttempts(
    deliveryId: string,
    limit: number,
    before?: AttemptKey,
  ): Promise<DeliveryAttemptRecord[]> {
    const page = before
      ? statements.attemptsBefore({ deliveryId, limit, ...before })
      : statements.newestAttempts({ deliveryId, limit });
    return (await this.pool.query<DeliveryAttemptRecord>(page)).rows;
  }

  /**
   * Records one attempt and where the delivery now stands, together, and on a change of status extends
   * or ends its endpoint's run of failures (D35) in the same transaction. True when that counted a failure.
   */
  async recordAttempt(
    attempt: DeliveryAttemptRecord,
    status: DeliveryStatus,
    settling: AttemptSettling = {},
  ): Promise<boolean> {
    return withTransaction(this.pool, (client) => this.record(client, { attempt, status, ...settling }));
  }

  /** A drain's attempts (D36) in one transaction, in order. How many failures that counted (D35). */
  async recordAttempts(records: readonly RecordedAttempt[]): Promise<number> {
    return withTransaction(this.pool, async (client) => {
      let counted = 0;
      for (const record of records) if (await this.record(client, record)) counted++;
      return counted;
    });
  }

  private async record(
    client: Queryable,
    { attempt, status, exhausted = false, drained = false }: RecordedAttempt,
  ): Promise<boolean> {
    const { rows } = await client.query<{ status: DeliveryStatus; subscriptionId: string }>(
      statements.statusOf({ id: attempt.deliveryId }),
    );
    const before = rows[0];
    const now = attempt.startedAt + attempt.durationMs;
    await client.query(statements.upsertAttempt(attempt));
    await client.query(statements.settle({ id: attempt.deliveryId, status, error: attempt.error, now }));
    if (!before || before.status === status) return false;
    const { subscriptionId } = before;
    const counted = await this.endpointHealth.settled(client, subscriptionId, status, now, attempt.error);
    await this.holds.settled(client, {
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
   * while a series is still running and once the delivery has had `maxSeries` (D40).
   */
  async reopen(id: string, now: number, maxSeries: number): Promise<Reopening | undefined> {
    const { rows } = await this.pool.query<SeriesRow>(statements.reopen({ id, now, maxSeries }));
    if (rows[0]) return reopening(true, rows[0]);
    // Not reopened: why is read after, and only names the refusal.
    const { rows: why } = await this.pool.query<SeriesRow>(statements.seriesOf({ id }));
    return why[0] && reopening(false, why[0]);
  }
}
