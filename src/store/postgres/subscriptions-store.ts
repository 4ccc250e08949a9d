import { admitsExecution } from "../../domain/subscription-matching.js";
import type { CappedCreate } from "../records.js";
import type { StoreArea } from "../store.js";
import {
  type ExecutionFacts,
  forDelivery,
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
} from "../subscriptions-store.js";
import { type PostgresPool, withTransaction } from "./database.js";
import { namedStatement } from "./named-parameters.js";

const statements = {
  insert: namedStatement(subscriptionSql.insert),
  update: namedStatement(subscriptionSql.update),
  rotateSecret: namedStatement(subscriptionSql.rotateSecret),
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

  async get(id: string): Promise<SubscriptionRecord | undefined> {
    const row = await this.liveRow(id);
    return row && toRecord(row);
  }

  async list(workspaceId: string): Promise<SubscriptionRecord[]> {
    return (await this.pool.query<SubscriptionRow>(statements.byWorkspace({ workspaceId }))).rows.map(
      toRecord,
    );
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

  async matching(workspaceId: string, execution: ExecutionFacts): Promise<SubscriptionForDelivery[]> {
    return (await this.matchingRows(workspaceId, execution)).map((row) => forDelivery(this.masterKey, row));
  }

  async anyMatching(workspaceId: string, execution: ExecutionFacts): Promise<boolean> {
    return (await this.matchingRows(workspaceId, execution)).length > 0;
  }

  async getForDelivery(id: string): Promise<SubscriptionForDelivery | undefined> {
    const { rows } = await this.pool.query<SubscriptionRow>(statements.byId({ id }));
    return rows[0] && forDelivery(this.masterKey, rows[0]);
  }

  private async matchingRows(workspaceId: string, execution: ExecutionFacts): Promise<SubscriptionRow[]> {
    const { rows } = await this.pool.query<SubscriptionRow>(statements.activeOfWorkspace({ workspaceId }));
    return rows.filter((row) => admitsExecution(toRecord(row), execution));
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
