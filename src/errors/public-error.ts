import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { isGrpcServiceError, ServiceError } from "@temporalio/client";
import { logger } from "../logging/logger.js";
import { QueryTimeoutError } from "./query-timeout.js";
import { isSqliteBusy } from "./sqlite-busy.js";
import { StoreUnavailableError } from "./store-unavailable.js";

/**
 * What a client may see of an error. A ConnectError was made on purpose with a message meant
 * for clients; anything else is a fault whose message may hold internals, so it is logged
 * under an incident id and the client gets only that id (D10: 500 with no internals). A database or a
 * Temporal frontend that cannot be reached is no fault of the request: 503, to be retried.
 */
export function toPublicError(error: unknown, context: string): ConnectError {
  if (error instanceof ConnectError) return error;
  if (error instanceof StoreUnavailableError) {
    // The cause names the server; the log keeps it, the client gets a retryable 503 (issue 15).
    logger.warn({ err: error.cause, context }, "the store's database is unreachable");
    return new ConnectError(error.message, Code.Unavailable);
  }
  if (isSqliteBusy(error)) {
    // Another process held SQLite's write lock past the busy timeout: nothing was written; retryable.
    logger.warn({ err: error, context }, "the store's database stayed locked past the busy timeout");
    return new ConnectError("the database is busy; retry shortly", Code.Unavailable);
  }
  if (isTemporalUnreachable(error)) {
    // The cause names the frontend's address; the log keeps it, the client gets a retryable 503.
    logger.warn({ err: error, context }, "the Temporal frontend is unreachable");
    return new ConnectError(
      "the workflow engine (Temporal) cannot be reached; retry shortly",
      Code.Unavailable,
    );
  }
  if (error instanceof QueryTimeoutError) return new ConnectError(error.message, Code.DeadlineExceeded);
  const incident = randomUUID();
  logger.error({ err: error, incident, context }, "unexpected error");
  return new ConnectError(`internal error (incident ${incident})`, Code.Internal);
}

/** gRPC's UNAVAILABLE, as the Temporal client reports a frontend it cannot connect to. */
const grpcUnavailable = 14;

function isTemporalUnreachable(error: unknown): boolean {
  const grpc = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(grpc) && grpc.code === grpcUnavailable;
}
