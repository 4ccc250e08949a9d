import { Code, ConnectError } from "@connectrpc/connect";
import { KeyedCount } from "./keyed-count.js";
import type { Quotas } from "./quotas.js";

/**
 * D45: at most `exportsPerUser` exports of one user stream at once from this process, however long each
 * takes, so one tenant's exports cannot hold every read connection or core. The next is refused at once
 * with resource_exhausted (429), never queued: an export lasts as long as its client reads.
 */
export class ExportSlots {
  private readonly running = new KeyedCount();

  constructor(private readonly limits: Pick<Quotas["reads"], "exportsPerUser">) {}

  /** One of `userId`'s slots, held until the returned release is called; or the refusal. */
  take(userId: string): () => void {
    const most = this.limits.exportsPerUser;
    if (this.running.of(userId) >= most) {
      throw new ConnectError(
        `at most ${most} log exports of one user run at once (D45); wait for one to finish`,
        Code.ResourceExhausted,
      );
    }
    return this.running.take(userId);
  }
}
