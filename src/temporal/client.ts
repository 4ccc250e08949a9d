import type { Interceptor } from "@grpc/grpc-js";
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from "@temporalio/client";
import { tracedClientInterceptors } from "./tracing.js";

/**
 * A Temporal client that connects on first use: the API server starts, and serves logs, while Temporal is
 * still coming up or briefly away; only the calls that start executions wait for it. `interceptors` see
 * every call after the SDK's own retries (the metrics' timing, issue 16). With tracing on, each start
 * carries the caller's span to the workflow (D50).
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
    interceptors: tracedClientInterceptors() ?? {},
  });
}
