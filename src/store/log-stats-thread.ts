import { Worker } from "node:worker_threads";
import { QueryTimeoutError } from "../errors/query-timeout.js";
import type { HourRange, LogStats, StatsFilter } from "./log-stats-query.js";
import type { StatsAnswer, StatsJob } from "./log-stats-worker.js";

/** How long one stats request may read before it is given up (and the thread replaced). */
export const statsTimeoutMs = 30_000;

/**
 * flowlog runs from its TypeScript sources (bin/flowlog.js registers tsx on the main thread only), so
 * the worker registers tsx itself before it loads its module. Dynamic imports only: the eval'd code is
 * CommonJS or a module, as the process's own --input-type says.
 */
const bootstrap = `
import("node:worker_threads")
  .then(({ workerData }) => import(workerData.tsx).then(({ register }) => (register(), import(workerData.module))));
`;

interface Pending {
  job: StatsJob;
  resolve(stats: LogStats): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The API process's side of log-stats-worker.ts: one thread, started on the first request and kept,
 * which answers one request at a time. A request that reads past `timeoutMs` is refused (504, naming what
 * to narrow) and the thread, stuck in it, is replaced; the requests queued behind it go to the new one.
 */
export class LogStatsThread {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  constructor(
    private readonly file: string,
    private readonly timeoutMs = statsTimeoutMs,
  ) {}

  stats(filter: StatsFilter, range: HourRange): Promise<LogStats> {
    const job: StatsJob = { id: this.nextId++, file: this.file, filter, range };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.timedOut(job.id), this.timeoutMs);
      this.pending.set(job.id, { job, resolve, reject, timer });
      this.running().postMessage(job);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private running(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(bootstrap, {
      eval: true,
      workerData: {
        tsx: import.meta.resolve("tsx/esm/api"),
        module: new URL("./log-stats-worker.ts", import.meta.url).href,
      },
    });
    worker.on("message", (answer: StatsAnswer) => this.answered(answer));
    worker.on("error", (error) => this.failed(worker, error));
    // An idle stats thread does not keep the process alive; after the listeners, since adding a message
    // listener refs the worker again.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private answered(answer: StatsAnswer): void {
    const pending = this.pending.get(answer.id);
    if (!pending) return;
    this.settle(answer.id);
    if ("stats" in answer) pending.resolve(answer.stats);
    else pending.reject(new Error(`log stats: ${answer.error}`));
  }

  private timedOut(id: number): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.settle(id);
    pending.reject(
      new QueryTimeoutError(
        `the stats read for more than ${this.timeoutMs / 1_000} s: narrow the range (startDate, endDate) or filter by workflow or level`,
      ),
    );
    this.replaceWorker();
  }

  private failed(worker: Worker, error: Error): void {
    if (worker !== this.worker) return;
    this.worker = undefined;
    for (const id of [...this.pending.keys()]) {
      const pending = this.pending.get(id);
      this.settle(id);
      pending?.reject(error);
    }
  }

  /** The old thread is still inside the request that ran out of time: end it, and resend the rest. */
  private replaceWorker(): void {
    const stuck = this.worker;
    this.worker = undefined;
    void stuck?.terminate();
    for (const { job } of this.pending.values()) this.running().postMessage(job);
  }

  private settle(id: number): void {
    const pending = this.pending.get(id);
    if (pending) clearTimeout(pending.timer);
    this.pending.delete(id);
  }
}
