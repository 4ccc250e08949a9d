import { admitsExecution, type ExecutionFacts } from "../../domain/subscription-matching.js";
import type { CappedCreate } from "../records.js";
import type { StoreArea } from "../store.js";
import {
  forDelivery,
  holdsExpiredSecret,
  type NewSubscription,
  type SecretChange,
  type SubscriptionForDelivery,
  type SubscriptionRecord,
  type SubscriptionRow,
  type SubscriptionSettings,
  type SubscriptionsStore,
  sealSecret,
  settingsParameters,
  subscriptionSql,
  toRecord,
  withoutPreviousSecret,
} from "../subscriptions-store.js";
import { type PostgresPool, withTransaction } from "./database.js";
import { namedStatement } from "./named-parameters.js";

const statements = {
  insert: namedStatement(subscriptionSql.insert),
  update: namedStatement(subscriptionSql.update),
  rotateSecret: namedStatement(subscriptionSql.rotateSecret),
  clearExpiredSecret: namedStatement(subscriptionSql.clearExpiredSecret),
  setActive: namedStatement(subscriptionSql.setActive),
  delete: namedStatement(subscriptionSql.delete),
  byId: namedStatement(subscriptionSql.byId),
  liveCount: namedStatement(subscriptionSql.liveCount),
  byWorkspace: namedStatement(subscriptionSql.byWorkspace),
  activeOfWorkspace: namedStatement(subscriptionSql.activeOfWorkspace),
};

/**
 * Notification subscriptions on PostgreSQL (D18, D24, D32): SQLite's SubscriptionsStore, its statements
 * and rows (subscriptionSql), as promises. Secrets are sealed under the same key and context.
 */
export class PostgresSubscriptionsStore implements StoreArea<SubscriptionsStore> {
  constructor(
    private readonly pool: PostgresPool,
    private readonly masterKey: Buffer,
  ) {}

  /**
   * Creates the subscription unless its workspace already has `max` live ones (D26). The workspace row
   * is locked before counting, so creations on two machines count one after the other.
   */
  async create(
    subscription: NewSubscription,
    secret: string | null,
    max = Number.POSITIVE_INFINITY,
  ): Promise<CappedCreate<SubscriptionRecord>> {
    const { workspaceId } = subscription;
    const sealed = secret === null ? null : sealSecret(this.masterKey, workspaceId, subscription.id, secret);
    return withTransaction(this.pool, async (client) => {
      await client.query("SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE", [workspaceId]);
      const { rows: counted } = await client.query<{ count: number }>(statements.liveCount({ workspaceId }));
      const count = counted[0]?.count ?? 0;
      if (count >= max) return { full: count };
      const { rows } = await client.query<SubscriptionRow>(
        statements.insert({
          ...settingsParameters(subscription),
          id: subscription.id,
          workspace_id: workspaceId,
          secret_sealed: sealed,
          at: subscription.createdAt,
        }),
      );
      return { created: toRecord(rows[0] as SubscriptionRow) };
    });
  }

  async get(id: string, now = Date.now()): Promise<SubscriptionRecord | undefined> {
    const row = await this.liveRow(id);
    return row && toRecord(await this.unexpired(row, now));
  }

  async list(workspaceId: string, now = Date.now()): Promise<SubscriptionRecord[]> {
    const { rows } = await this.pool.query<SubscriptionRow>(statements.byWorkspace({ workspaceId }));
    return Promise.all(rows.map(async (row) => toRecord(await this.unexpired(row, now))));
  }

  async update(
    id: string,
    settings: SubscriptionSettings,
    secret: SecretChange,
    at: number,
  ): Promise<SubscriptionRecord | undefined> {
    // A subscription never changes workspace, so the context read here is the one it is sealed under.
    const current = await this.liveRow(id);
    if (!current) return undefined;
    return this.returning(
      statements.update({
        ...settingsParameters(settings),
        id,
        at,
        keep_secret: secret === undefined ? 1 : 0,
        secret_sealed:
          typeof secret === "string" ? sealSecret(this.masterKey, current.workspace_id, id, secret) : null,
      }),
    );
  }

  async rotateSecret(
    id: string,
    secret: string,
    previousExpiresAt: number | null,
    at: number,
  ): Promise<SubscriptionRecord | undefined> {
    const current = await this.liveRow(id);
    if (!current) return undefined;
    return this.returning(
      statements.rotateSecret({
        id,
        at,
        secret_sealed: sealSecret(this.masterKey, current.workspace_id, id, secret),
        keep_previous: previousExpiresAt === null ? 0 : 1,
        previous_expires_at: previousExpiresAt,
      }),
    );
  }

  async setActive(id: string, active: boolean, at: number): Promise<SubscriptionRecord | undefined> {
    return this.returning(statements.setActive({ active: active ? 1 : 0, at, id }));
  }

  async delete(id: string, at: number): Promise<boolean> {
    return ((await this.pool.query(statements.delete({ at, id }))).rowCount ?? 0) > 0;
  }

  async matching(
    workspaceId: string,
    execution: ExecutionFacts,
    now = Date.now(),
  ): Promise<SubscriptionForDelivery[]> {
    const rows = await this.matchingRows(workspaceId, execution);
    return Promise.all(rows.map(async (row) => forDelivery(this.masterKey, await this.unexpired(row, now))));
  }

  async anyMatching(workspaceId: string, execution: ExecutionFacts): Promise<boolean> {
    return (await this.matchingRows(workspaceId, execution)).length > 0;
  }

  async getForDelivery(id: string, now = Date.now()): Promise<SubscriptionForDelivery | undefined> {
    const { rows } = await this.pool.query<SubscriptionRow>(statements.byId({ id }));
    return rows[0] && forDelivery(this.masterKey, await this.unexpired(rows[0], now));
  }

  private async matchingRows(workspaceId: string, execution: ExecutionFacts): Promise<SubscriptionRow[]> {
    const { rows } = await this.pool.query<SubscriptionRow>(statements.activeOfWorkspace({ workspaceId }));
    return rows.filter((row) => admitsExecution(toRecord(row), execution));
  }

  /** The row as of `now`: a replaced secret past its grace period is cleared from storage as it is found (D33). */
  private async unexpired(row: SubscriptionRow, now: number): Promise<SubscriptionRow> {
    if (!holdsExpiredSecret(row, now)) return row;
    await this.pool.query(statements.clearExpiredSecret({ id: row.id, now }));
    return withoutPreviousSecret(row);
  }

  private async liveRow(id: string): Promise<SubscriptionRow | undefined> {
    const { rows } = await this.pool.query<SubscriptionRow>(statements.byId({ id }));
    return rows[0]?.deleted_at === null ? rows[0] : undefined;
  }

  private async returning(statement: { text: string; values: unknown[] }) {
    const { rows } = await this.pool.query<SubscriptionRow>(statement);
    return rows[0] && toRecord(rows[0]);
  }
}
