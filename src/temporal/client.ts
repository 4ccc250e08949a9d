import { Client, Connection } from "@temporalio/client";

/**
 * A Temporal client that connects on first use: the API server starts, and serves logs, while Temporal is
 * still coming up or briefly away; only the calls that start executions wait for it.
 */
export function lazyTemporalClient(address: string, namespace: string): Client {
  return new Client({ connection: Connection.lazy({ address }), namespace });
}
