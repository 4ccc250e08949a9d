import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { logger } from "../logging/logger.js";

/**
 * What a client may see of an error. A ConnectError was made on purpose with a message meant
 * for clients; anything else is a fault whose message may hold internals, so it is logged
 * under an incident id and the client gets only that id (D10: 500 with no internals).
 */
export function toPublicError(error: unknown, context: string): ConnectError {
  if (error instanceof ConnectError) return error;
  const incident = randomUUID();
  logger.error({ err: error, incident, context }, "unexpected error");
  return new ConnectError(`internal error (incident ${incident})`, Code.Internal);
}
