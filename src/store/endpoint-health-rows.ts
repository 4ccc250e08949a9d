import type { FailureRun } from "../domain/auto-disable.js";
import type { Channel } from "./subscriptions-store.js";

/** A webhook or chat subscription's endpoint as its watcher reads it (D35, D36); never its secret. */
export interface WatchedEndpoint {
  subscriptionId: string;
  workspaceId: string;
  channel: Channel;
  /** The endpoint's URL; a chat URL is itself a credential, so only a label of it may be shown. */
  url: string;
  active: boolean;
  deleted: boolean;
}

/** The subscription's columns a WatchedEndpoint is read from. */
export interface WatchedEndpointRow {
  id: string;
  workspace_id: string;
  channel: Channel;
  config_json: string;
  active: number;
  deleted_at: number | null;
}

export function watchedEndpointFromRow(row: WatchedEndpointRow): WatchedEndpoint {
  const { url } = JSON.parse(row.config_json) as { url?: string };
  return {
    subscriptionId: row.id,
    workspaceId: row.workspace_id,
    channel: row.channel,
    url: url ?? "",
    active: row.active === 1,
    deleted: row.deleted_at !== null,
  };
}

/** A webhook or chat subscription as the endpoint-health watcher judges it (D35). */
export interface EndpointHealth extends WatchedEndpoint {
  /** The run of failed deliveries it is in, with the last one's error; null while nothing is failing. */
  run: (FailureRun & { lastFailure: string | null }) | null;
}

/**
 * D35's bookkeeping on notification_subscriptions as both stores write it (D32: the same columns in
 * SQLite and PostgreSQL), with `@name` parameters; each store only runs the statements.
 */

/** The channels D35 can disable: an e-mail subscription is where the notice goes, not what it is about. */
const watchedChannels = "('webhook', 'slack')";

export const endpointHealthSql = {
  byId: `SELECT id, workspace_id, channel, config_json, active, deleted_at, failing_since, failed_deliveries,
      disable_notice_at, last_failure
    FROM notification_subscriptions WHERE id = @id`,
  /**
   * The run begins at its earliest failure, whichever commits first: attempts that end together settle in
   * any order, and D36 takes back every exhausted delivery settled since the run began.
   */
  failed: `UPDATE notification_subscriptions
    SET failing_since = CASE WHEN failing_since IS NULL OR @at < failing_since THEN @at ELSE failing_since END,
      failed_deliveries = failed_deliveries + 1,
      last_failure = @error
    WHERE id = @id AND channel IN ${watchedChannels} AND deleted_at IS NULL`,
  succeeded: `UPDATE notification_subscriptions
    SET failing_since = NULL, failed_deliveries = 0, disable_notice_at = NULL, last_failure = NULL
    WHERE id = @id AND failing_since IS NOT NULL`,
  claimNotice: `UPDATE notification_subscriptions SET disable_notice_at = @at
    WHERE id = @id AND failing_since = @failingSince AND disable_notice_at IS NULL AND active = 1
      AND deleted_at IS NULL`,
  disable: `UPDATE notification_subscriptions
    SET active = 0, disabled_reason = @reason, disabled_at = @at, updated_at = @at
    WHERE id = @id AND failing_since = @failingSince AND disable_notice_at IS NOT NULL AND active = 1
      AND deleted_at IS NULL`,
} as const;

/** A row of endpointHealthSql.byId. */
export interface HealthRow extends WatchedEndpointRow {
  failing_since: number | null;
  failed_deliveries: number;
  disable_notice_at: number | null;
  last_failure: string | null;
}

export function endpointHealthFromRow(row: HealthRow): EndpointHealth {
  return {
    ...watchedEndpointFromRow(row),
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
