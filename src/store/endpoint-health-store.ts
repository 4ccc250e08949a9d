import type { FailureRun } from "../domain/auto-disable.js";
import type { Db } from "./database.js";
import type { DeliveryStatus } from "./deliveries-store.js";
import type { Channel } from "./subscriptions-store.js";

/** The channels D35 can disable: an e-mail subscription is where the notice goes, not what it is about. */
const watchedChannels = "('webhook', 'slack')";

/** A webhook or chat subscription as the endpoint-health watcher judges it (D35); never its secret. */
export interface EndpointHealth {
  subscriptionId: string;
  workspaceId: string;
  channel: Channel;
  /** The endpoint's URL; a chat URL is itself a credential, so only a label of it may be shown. */
  url: string;
  active: boolean;
  deleted: boolean;
  /** The run of failed deliveries it is in, with the last one's error; null while nothing is failing. */
  run: (FailureRun & { lastFailure: string | null }) | null;
}

interface HealthRow {
  id: string;
  workspace_id: string;
  channel: Channel;
  config_json: string;
  active: number;
  deleted_at: number | null;
  failing_since: number | null;
  failed_deliveries: number;
  disable_notice_at: number | null;
  last_failure: string | null;
}

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
      byId: db.prepare(
        `SELECT id, workspace_id, channel, config_json, active, deleted_at, failing_since, failed_deliveries,
           disable_notice_at, last_failure
         FROM notification_subscriptions WHERE id = ?`,
      ),
      failed: db.prepare(
        `UPDATE notification_subscriptions
         SET failing_since = coalesce(failing_since, @at), failed_deliveries = failed_deliveries + 1,
           last_failure = @error
         WHERE id = @id AND channel IN ${watchedChannels} AND deleted_at IS NULL`,
      ),
      succeeded: db.prepare(
        `UPDATE notification_subscriptions
         SET failing_since = NULL, failed_deliveries = 0, disable_notice_at = NULL, last_failure = NULL
         WHERE id = @id AND failing_since IS NOT NULL`,
      ),
      claimNotice: db.prepare(
        `UPDATE notification_subscriptions SET disable_notice_at = @at
         WHERE id = @id AND failing_since = @failingSince AND disable_notice_at IS NULL AND active = 1
           AND deleted_at IS NULL`,
      ),
      disable: db.prepare(
        `UPDATE notification_subscriptions
         SET active = 0, disabled_reason = @reason, disabled_at = @at, updated_at = @at
         WHERE id = @id AND failing_since = @failingSince AND disable_notice_at IS NOT NULL AND active = 1
           AND deleted_at IS NULL`,
      ),
    };
  }

  /** undefined when there is no such subscription. */
  async get(subscriptionId: string): Promise<EndpointHealth | undefined> {
    const row = this.statements.byId.get(subscriptionId) as HealthRow | undefined;
    return row && toHealth(row);
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

  /** Records the advance notice of this run; false when it was already sent, or the run is over. */
  async claimNotice(subscriptionId: string, failingSince: number, at: number): Promise<boolean> {
    return this.statements.claimNotice.run({ id: subscriptionId, failingSince, at }).changes > 0;
  }

  /** Disables the subscription for this run, noticed before; false when that is already done or moot. */
  async disable(subscriptionId: string, failingSince: number, reason: string, at: number): Promise<boolean> {
    return this.statements.disable.run({ id: subscriptionId, failingSince, reason, at }).changes > 0;
  }
}

function toHealth(row: HealthRow): EndpointHealth {
  const { url } = JSON.parse(row.config_json) as { url?: string };
  return {
    subscriptionId: row.id,
    workspaceId: row.workspace_id,
    channel: row.channel,
    url: url ?? "",
    active: row.active === 1,
    deleted: row.deleted_at !== null,
    run:
      row.failing_since === null
        ? null
        : {
            failingSince: row.failing_since,
            failedDeliveries: row.failed_deliveries,
            noticedAt: row.disable_notice_at,
            lastFailure: row.last_failure,
          },
  };
}
