import type pg from "pg";
import { defaultQuotas, type Quotas } from "../../limits/quotas.js";
import { cancellableRead, type OverTime, type PostgresPool, type Queryable } from "./database.js";

/**
 * D46: the reads that grow with a tenant's data (lists, stats) on a pool of their own, apart from the
 * one every other request needs, each within its time and cancelled on the server when its caller
 * leaves. `canceller` is the other pool, which sends the cancellations. The pool's statement_timeout is
 * the lists' limit, the server's own backstop.
 */
export class TenantReads {
  constructor(
    private readonly pool: PostgresPool,
    private readonly canceller: Queryable,
    readonly limits: Pick<Quotas["reads"], "statementTimeoutMs" | "statsTimeoutMs">,
  ) {}

  /** On the one pool of a tool or test that opens no second one, with the default limits. */
  static on(pool: PostgresPool): TenantReads {
    return new TenantReads(pool, pool, defaultQuotas.reads);
  }

  /** `work` within the list limit, or `limitMs`; past it, `overTime` says what to narrow. */
  run<T>(
    signal: AbortSignal | undefined,
    overTime: OverTime,
    work: (client: pg.PoolClient) => Promise<T>,
    limitMs = this.limits.statementTimeoutMs,
  ): Promise<T> {
    return cancellableRead(this.pool, this.canceller, { signal, limitMs, overTime }, work);
  }
}
