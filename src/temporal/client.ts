import type { Interceptor } from "@grpc/grpc-js";
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from "@temporalio/client";

/**
 * A Temporal client that connects on first use: the API server starts, and serves logs, while Temporal is
 * still coming up or briefly away; only the calls that start executions wait for it. `interceptors` see
 * every call after the SDK's own retries (the metrics' timing, issue 16). With tracing on, a start
 * carries the caller's span in the execution's own input (D50, start-execution.ts), not in Temporal's headers.
 */
export function lazyTemporalClient(
  address: string,
  namespace: string,
  interceptors: Interceptor[] = [],
): Client {
  const retry = makeGrpcRetryInterceptor(defaultGrpcRetryOptions());
  return new Client({
    connection: Connection.lazy({ address, interceptors: [retry, ...interceptors] }),
    namespace,
  });
}
