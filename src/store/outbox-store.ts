import type { Db } from "./database.js";
import { fanOutIntentColumns } from "./outbox-rows.js";

/** A fan-out to start (issue 12): the notifications of one new log entry, on the worker's delivery queue. */
export interface FanOutIntent {
  logId: string;
  workspaceId: string;
  workflowId: string;
  taskQueue: string;
  /**
   * D50: the W3C trace context of the execution's span, when its worker traced it: the notifications'
   * spans are its children, whichever process starts them (a deliveries-only worker included). A claimed
   * intent has both, null when untraced.
   */
  traceparent?: string | null;
  tracestate?: string | null;
}

/**
 * The notification outbox (issue 12, D19): a log entry that has subscribers is written together with the
 * intent to start its fan-out, in one transaction (logs-store.ts), and a dispatcher in the worker
 * (temporal/fan-out-outbox.ts) starts the workflows after the execution has moved on. An intent is
 * claimed for a lease, so processes sharing the file start each one once, and one whose process died
 * mid-start is claimed again when its lease runs out.
 */
export class OutboxStore {
  private readonly statements;

  constructor(db: Db) {
    this.statements = {
      claim: db.prepare(
        `UPDATE notification_outbox SET not_before = @leaseEnd
         WHERE log_id IN (SELECT log_id FROM notification_outbox WHERE not_before <= @now
                          ORDER BY not_before LIMIT @limit)
         RETURNING ${fanOutIntentColumns}`,
      ),
      remove: db.prepare("DELETE FROM notification_outbox WHERE log_id = ?"),
      postpone: db.prepare("UPDATE notification_outbox SET not_before = ? WHERE log_id = ?"),
      next: db.prepare("SELECT min(not_before) AS at FROM notification_outbox"),
      holds: db.prepare("SELECT 1 FROM notification_outbox WHERE log_id = ?").pluck(),
    };
  }

  /** Up to `limit` intents whose time has come, each now held for `leaseMs`. */
  async claim(now: number, leaseMs: number, limit: number): Promise<FanOutIntent[]> {
    return this.statements.claim.all({ now, leaseEnd: now + leaseMs, limit }) as FanOutIntent[];
  }

  /** The fan-out was started (or already was): the intent is done. */
  async remove(logId: string): Promise<void> {
    this.statements.remove.run(logId);
  }

  /** The start failed: try again at `at`. */
  async postpone(logId: string, at: number): Promise<void> {
    this.statements.postpone.run(at, logId);
  }

  /** Whether the entry's notifications are still waiting to start. */
  async holds(logId: string): Promise<boolean> {
    return this.statements.holds.get(logId) !== undefined;
  }

  /** When the earliest intent is due; undefined when there is none. */
  async nextDue(): Promise<number | undefined> {
    return (this.statements.next.get() as { at: number | null }).at ?? undefined;
  }
}
