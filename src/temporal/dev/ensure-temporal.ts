import { Connection } from "@temporalio/client";
import { registerSearchAttributes } from "../register-search-attributes.js";
import {
  startTemporalDevServer,
  type TemporalDevServer,
  type TemporalDevServerOptions,
} from "./dev-server.js";

export interface EnsureTemporalOptions extends TemporalDevServerOptions {
  /** An existing frontend (TEMPORAL_ADDRESS); when set, no dev server is started (D3). */
  address: string | undefined;
}

/**
 * A Temporal frontend with our search attributes on the namespace: the given cluster, or a dev server
 * started here. `stop` stops only what was started here.
 */
export async function ensureTemporal(options: EnsureTemporalOptions): Promise<TemporalDevServer> {
  const temporal = options.address
    ? { address: options.address, uiUrl: undefined, stop: async () => {} }
    : await startTemporalDevServer(options);
  try {
    await withConnection(temporal.address, (connection) =>
      registerSearchAttributes(connection, options.namespace),
    );
  } catch (error) {
    await temporal.stop();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `cannot prepare Temporal namespace "${options.namespace}" at ${temporal.address}: ${reason}`,
      {
        cause: error,
      },
    );
  }
  return temporal;
}

async function withConnection<T>(address: string, use: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address });
  try {
    return await use(connection);
  } finally {
    await connection.close();
  }
}
