import { fileURLToPath } from "node:url";
import { NativeConnection, Worker } from "@temporalio/worker";

export const noopTaskQueue = "bench-noop";

export const noopActivities = {
  async noop(): Promise<string> {
    return "ok";
  },
  /** The execution bench's floor (issue 12): one GET of a loopback JSON API, its parsed answer. */
  async fetchJson(url: string): Promise<unknown> {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
    return response.json();
  },
};

/**
 * The baseline's worker, in a process of its own like `flowlog worker`:
 *
 *     node --import tsx bench/support/noop-worker.ts <temporal address>
 */
async function main(address: string): Promise<void> {
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue: noopTaskQueue,
    workflowsPath: fileURLToPath(new URL("./noop-workflow.ts", import.meta.url)),
    activities: noopActivities,
  });
  process.once("SIGTERM", () => worker.shutdown());
  const running = worker.run();
  console.log(`noop worker polling ${noopTaskQueue}`);
  await running;
  await connection.close();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main(process.argv[2] ?? "localhost:7233");
