import { Worker } from "node:worker_threads";
import { defaultQuotas } from "../limits/quotas.js";
import type { HourRange, LogStats, StatsFilter } from "./log-stats-sql.js";
import type { StatsAnswer, StatsJob } from "./log-stats-worker.js";
import { statsOverTime } from "./tenant-reads.js";

/**
 * Compiled (`dist/js/`), the thread runs the worker module itself. From the sources (tests under tsx, which
 * registers on the main thread only), the thread registers tsx before it loads the module. Dynamic imports
 * only: the eval'd code is CommonJS or a module, as the process's own --input-type says.
 */
const compiled = import.meta.url.endsWith(".js");
const fromSources = `
import("node:worker_threads")
  .then(({ workerData }) => import(workerData.tsx).then(({ register }) => (register(), import(workerData.module))));
`;

function statsThread(): Worker {
  if (compiled) return new Worker(new URL("./log-stats-worker.js", import.meta.url));
  return new Worker(fromSources, {
    eval: true,
    workerData: {
      tsx: import.meta.resolve("tsx/esm/api"),
      module: new URL("./log-stats-worker.ts", import.meta.url).href,
    },
  });
}

export interface LogStatsThreadsOptions {
  /** How long one stats read may run, timed from when a thread starts it (D46). */
  timeoutMs: number;
  /** Threads reading at once; reads beyond wait for one, in the order they came. */
  threads: number;
}

interface Job {
  message: StatsJob;
  resolve(stats: LogStats): void;
  reject(error: unknown): void;
  signal: AbortSignal | undefined;
  abandon?: () => void;
}

interface Reading {
  job: Job;
  timer: NodeJS.Timeout;
}

/**
 * The API process's side of log-stats-worker.ts: up to `threads` threads, each started on first need and
 * kept, each reading one request at a time, so one slow read does not hold up the others (D46). A read
 * is timed from when its thread starts it, never while it waits: past `timeoutMs` it is refused (504,
 * naming what to narrow) and its thread, stuck in it, ended. A request whose client left is dropped from
 * the queue, or its thread ended, so nobody's read goes on for a caller who is gone.
 */
export class LogStatsThreads {
  private readonly idle: Worker[] = [];
  private readonly reading = new Map<Worker, Reading>();
  private readonly waiting: Job[] = [];
  private nextId = 1;

  constructor(
    private readonly file: string,
    private readonly options: LogStatsThreadsOptions = {
      timeoutMs: defaultQuotas.reads.statsTimeoutMs,
      threads: defaultQuotas.reads.statsPerProcess,
    },
  ) {}

  stats(filter: StatsFilter, range: HourRange, signal?: AbortSignal): Promise<LogStats> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const job: Job = {
        message: { id: this.nextId++, file: this.file, filter, range },
        resolve,
        reject,
        signal,
      };
      if (signal) {
        job.abandon = () => this.abandon(job);
        signal.addEventListener("abort", job.abandon, { once: true });
      }
      this.waiting.push(job);
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    const threads = [...this.idle, ...this.reading.keys()];
    const jobs = [...this.waiting.splice(0), ...[...this.reading.values()].map(({ job }) => job)];
    this.idle.length = 0;
    for (const [thread, reading] of this.reading) this.settled(thread, reading);
    for (const job of jobs) job.reject(new Error("log stats: the store was closed"));
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  /** Starts waiting jobs while a thread is idle or another may be started. */
  private dispatch(): void {
    while (this.waiting.length > 0 && (this.idle.length > 0 || this.reading.size < this.options.threads)) {
      const job = this.waiting.shift() as Job;
      const thread = this.idle.pop() ?? this.started();
      // Ref'd while it runs, so a process awaiting the stats lives until they come; the thread is not.
      const timer = setTimeout(() => this.timedOut(thread), this.options.timeoutMs);
      this.reading.set(thread, { job, timer });
      thread.postMessage(job.message);
    }
  }

  private started(): Worker {
    const thread = statsThread();
    thread.on("message", (answer: StatsAnswer) => this.answered(thread, answer));
    thread.on("error", (error) => this.failed(thread, error));
    // An idle stats thread does not keep the process alive; after the listeners, since adding a message
    // listener refs the worker again.
    thread.unref();
    return thread;
  }

  private answered(thread: Worker, answer: StatsAnswer): void {
    const reading = this.reading.get(thread);
    if (reading?.job.message.id !== answer.id) return;
    this.settled(thread, reading);
    this.idle.push(thread);
    if ("stats" in answer) reading.job.resolve(answer.stats);
    else reading.job.reject(new Error(`log stats: ${answer.error}`));
    this.dispatch();
  }

  private timedOut(thread: Worker): void {
    const reading = this.reading.get(thread);
    if (!reading) return;
    this.ended(thread, reading);
    reading.job.reject(statsOverTime(this.options.timeoutMs));
  }

  /** The client left: a waiting job goes from the queue, a running one with its thread. */
  private abandon(job: Job): void {
    const reason = job.signal?.reason;
    const queued = this.waiting.indexOf(job);
    if (queued >= 0) {
      this.waiting.splice(queued, 1);
      job.reject(reason);
      return;
    }
    for (const [thread, reading] of this.reading) {
      if (reading.job !== job) continue;
      this.ended(thread, reading);
      job.reject(reason);
      return;
    }
  }

  private failed(thread: Worker, error: Error): void {
    const idle = this.idle.indexOf(thread);
    if (idle >= 0) this.idle.splice(idle, 1);
    const reading = this.reading.get(thread);
    if (!reading) return;
    this.settled(thread, reading);
    reading.job.reject(error);
    this.dispatch();
  }

  /** A thread stuck in a read nobody waits for any more: ended, and the next job goes to a new one. */
  private ended(thread: Worker, reading: Reading): void {
    this.settled(thread, reading);
    void thread.terminate();
    this.dispatch();
  }

  private settled(thread: Worker, { job, timer }: Reading): void {
    clearTimeout(timer);
    this.reading.delete(thread);
    if (job.abandon) job.signal?.removeEventListener("abort", job.abandon);
  }
}
