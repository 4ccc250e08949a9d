import { parentPort, Worker, workerData } from "node:worker_threads";
import type { ExecutionRecord, LogEntryRecord } from "../store/records.js";
import { type GenerateRequest, generateExecutions } from "./generate.js";
import { Random } from "./random.js";

/**
 * Executions generated on a worker thread while the caller writes the ones before: running the engine
 * costs about as much as writing what it produced, so the two overlap instead of adding up. The thread
 * runs the same generator on the same seed, so the data is the same as generated in place.
 */
export interface GenerationJob {
  /** The text the Random is seeded with. */
  seed: string;
  request: GenerateRequest;
  chunkSize: number;
  /** Chunks the thread may make before the first is taken: the bound on memory. */
  ahead: number;
}

interface Started {
  job: GenerationJob;
  module: string;
}

/**
 * Log entries only, as JSON text: the caller has the workflow states, which need not cross per execution,
 * and JSON crosses faster than a structured clone of the same objects. The store keeps them as JSON.
 */
type Message = { entries: string } | { done: true };

/** The executions in chunks, in order. */
export async function* generateOffThread(job: GenerationJob): AsyncGenerator<ExecutionRecord[]> {
  if (job.request.count === 0 || job.request.workflows.length === 0) return;
  const states = new Map(job.request.workflows.map((w) => [w.id, w.state]));
  const started: Started = { job, module: import.meta.url };
  const worker = new Worker(new URL("./generation-thread-entry.mjs", import.meta.url), {
    workerData: started,
  });
  const messages = inbox(worker);
  try {
    for (let i = 0; i < job.ahead; i++) worker.postMessage("next");
    for (let message = await messages.next(); "entries" in message; message = await messages.next()) {
      worker.postMessage("next");
      const entries = JSON.parse(message.entries) as LogEntryRecord[];
      yield entries.map((entry) => ({ entry, workflowState: states.get(entry.workflowId) }));
    }
  } finally {
    await worker.terminate();
  }
}

/** The thread's messages one at a time; its error or an early exit rejects the next. */
function inbox(worker: Worker) {
  const queue: Message[] = [];
  let waiting: { resolve: (message: Message) => void; reject: (error: unknown) => void } | undefined;
  let failure: unknown;
  const fail = (error: unknown) => {
    failure = error;
    waiting?.reject(error);
  };
  worker.on("message", (message: Message) => {
    if (waiting) waiting.resolve(message);
    else queue.push(message);
    waiting = undefined;
  });
  worker.on("error", fail);
  worker.on("exit", (code) => fail(new Error(`the generation thread exited with code ${code}`)));
  return {
    next(): Promise<Message> {
      const message = queue.shift();
      if (message) return Promise.resolve(message);
      if (failure !== undefined) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
      });
    },
  };
}

/** The thread's side: a chunk for each "next" it was sent. */
async function serve(port: NonNullable<typeof parentPort>, job: GenerationJob): Promise<void> {
  const records = generateExecutions(new Random(job.seed), job.request);
  let credits = 0;
  let wake: (() => void) | undefined;
  port.on("message", () => {
    credits++;
    wake?.();
  });
  for (let done = false; !done; ) {
    while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
    credits--;
    const entries: LogEntryRecord[] = [];
    while (entries.length < job.chunkSize) {
      const next = await records.next();
      if (next.done) {
        done = true;
        break;
      }
      entries.push(next.value.entry);
    }
    if (entries.length > 0) port.postMessage({ entries: JSON.stringify(entries) } satisfies Message);
  }
  port.postMessage({ done: true } satisfies Message);
}

const started = workerData as Partial<Started> | undefined;
if (parentPort && started?.module === import.meta.url && started.job) {
  await serve(parentPort, started.job);
}
