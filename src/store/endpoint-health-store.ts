import type { Db } from "./database.js";
import type { DeliveryStatus } from "./delivery-rows.js";
import {
  type EndpointHealth,
  endpointHealthFromRow,
  endpointHealthSql,
  type HealthRow,
} from "./endpoint-health-rows.js";

/**
 * The area as the services see it (D32). `settled` is left out: the delivery log calls it inside its own
 * transaction, so each store's delivery log calls its own kind's, on that transaction's connection.
 */
export type EndpointHealthArea = Omit<EndpointHealthStore, "settled">;

/**
 * D35's bookkeeping on a subscription: the run of failed deliveries (counted as each delivery settles,
 * inside the delivery log's own transaction), the advance notice and flowlog's own disable. Each change is
 * conditional on the run it was decided for, so a success or a new run in between makes a stale decision
 * a no-op, and a retried activity finds its own claim instead of making a second one.
 */
export class EndpointHealthStore {
  private readonly statements;

  constructor(db: Db) {
    this.statements = {
      byId: db.prepare(endpointHealthSql.byId),
      failed: db.prepare(endpointHealthSql.failed),
      succeeded: db.prepare(endpointHealthSql.succeeded),
      claimNotice: db.prepare(endpointHealthSql.claimNotice),
      disable: db.prepare(endpointHealthSql.disable),
    };
  }

  /** undefined when there is no such subscription. */
  async get(subscriptionId: string): Promise<EndpointHealth | undefined> {
    const row = this.statements.byId.get({ id: subscriptionId }) as HealthRow | undefined;
    return row && endpointHealthFromRow(row);
  }

  /**
   * A delivery of the subscription has settled (called by the delivery log, in its transaction, when the
   * status changes): a failure extends the run of a webhook or chat endpoint, a success ends it. True when
   * a failure was counted.
   */
  settled(subscriptionId: string, status: DeliveryStatus, at: number, error: string | null): boolean {
    if (status === "succeeded") this.statements.succeeded.run({ id: subscriptionId });
    if (status !== "failed") return false;
    return this.statements.failed.run({ id: subscriptionId, at, error }).changes > 0;
  }

  /**
   * D36: a probe of a held endpoint failed. It extends the run as a failed delivery does, so D35 still
   * disables an endpoint that fails for days while its deliveries wait unattempted.
   */
  async probeFailed(subscriptionId: string, at: number, error: string | null): Promise<void> {
    this.statements.failed.run({ id: subscriptionId, at, error });
  }

  /** Records the advance notice of this run; false when it was already sent, or the run is over. */
  async claimNotice(subscriptionId: string, failingSince: number, at: number): Promise<boolean> {
    return this.statements.claimNotice.run({ id: subscriptionId, failingSince, at }).changes > 0;
  }

  /** Disables the subscription for this run, noticed before; false when that is already done or moot. */
  async disable(subscriptionId: string, failingSince: number, reason: string, at: number): Promise<boolean> {
    return this.statements.disable.run({ id: subscriptionId, failingSince, reason, at }).changes > 0;
  }
}
