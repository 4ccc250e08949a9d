import type { DeliveryStatus } from "../delivery-rows.js";
import type { EndpointHealth } from "../endpoint-health-rows.js";
import { endpointHealthFromRow, endpointHealthSql, type HealthRow } from "../endpoint-health-rows.js";
import type { EndpointHealthArea } from "../endpoint-health-store.js";
import type { PostgresPool, Queryable } from "./database.js";
import { type NumberedStatement, namedStatement } from "./named-parameters.js";

const statements = {
  byId: namedStatement(endpointHealthSql.byId),
  failed: namedStatement(endpointHealthSql.failed),
  succeeded: namedStatement(endpointHealthSql.succeeded),
  claimNotice: namedStatement(endpointHealthSql.claimNotice),
  disable: namedStatement(endpointHealthSql.disable),
};

/**
 * D35's bookkeeping on PostgreSQL (D32), with SQLite's statements (endpoint-health-rows.ts). Each change
 * is one conditional UPDATE: a second process making the same change waits for the first's row lock,
 * then finds its condition no longer holds, so a notice or a disable is claimed once.
 */
export class PostgresEndpointHealthStore implements EndpointHealthArea {
  constructor(private readonly pool: PostgresPool) {}

  async get(subscriptionId: string): Promise<EndpointHealth | undefined> {
    const { rows } = await this.pool.query<HealthRow>(statements.byId({ id: subscriptionId }));
    return rows[0] && endpointHealthFromRow(rows[0]);
  }

  /**
   * A delivery of the subscription has settled: called by the delivery log on the connection of its
   * transaction, when the status changes. True when a failure was counted.
   */
  async settled(
    db: Queryable,
    subscriptionId: string,
    status: DeliveryStatus,
    at: number,
    error: string | null,
  ): Promise<boolean> {
    if (status === "succeeded") await db.query(statements.succeeded({ id: subscriptionId }));
    if (status !== "failed") return false;
    return changedAny(db, statements.failed({ id: subscriptionId, at, error }));
  }

  async probeFailed(subscriptionId: string, at: number, error: string | null): Promise<void> {
    await this.pool.query(statements.failed({ id: subscriptionId, at, error }));
  }

  async claimNotice(subscriptionId: string, failingSince: number, at: number): Promise<boolean> {
    return changedAny(this.pool, statements.claimNotice({ id: subscriptionId, failingSince, at }));
  }

  async disable(subscriptionId: string, failingSince: number, reason: string, at: number): Promise<boolean> {
    return changedAny(this.pool, statements.disable({ id: subscriptionId, failingSince, reason, at }));
  }
}

async function changedAny(db: Queryable, statement: NumberedStatement): Promise<boolean> {
  return ((await db.query(statement)).rowCount ?? 0) > 0;
}
