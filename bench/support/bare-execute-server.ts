import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client, Connection } from "@temporalio/client";
import { noopTaskQueue } from "./noop-worker.js";
import type { fetchAndLogWorkflow, fetchWorkflow } from "./noop-workflow.js";

/**
 * The execution bench's floor front (issue 12): a bare `node:http` server that answers every POST by
 * running `fetchWorkflow` on the no-op worker's queue with the Temporal client and answering its result
 * as JSON. What an api sync execution of one HTTP block cannot do without: an HTTP request in, a
 * workflow started and awaited, an activity making an HTTP request out. No key, bucket, store or engine.
 *
 * With `log` after the URL, it runs `fetchAndLogWorkflow`, whose activity also writes a log entry.
 *
 *     node --import tsx bench/support/bare-execute-server.ts <temporal address> <url the activity fetches> [log]
 */
const [address, url, log] = process.argv.slice(2);
if (!address || !url) throw new Error("usage: bare-execute-server.ts <temporal address> <url> [log]");
const workflowType = log === "log" ? "fetchAndLogWorkflow" : "fetchWorkflow";

const client = new Client({ connection: await Connection.connect({ address }) });
let next = 0;
const server = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    client.workflow
      .execute<typeof fetchWorkflow | typeof fetchAndLogWorkflow>(workflowType, {
        taskQueue: noopTaskQueue,
        workflowId: `bench-floor-execute-${process.pid}-${next++}`,
        args: [url],
      })
      .then(
        (result) => {
          response.writeHead(200, { "content-type": "application/json" });
          response.end(JSON.stringify({ output: result }));
        },
        (error: unknown) => {
          response.writeHead(500, { "content-type": "text/plain" });
          response.end(String(error));
        },
      );
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(`bare execute server on port ${(server.address() as AddressInfo).port}`);
});
process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  void client.connection.close();
});
