import { createContextKey, type HandlerContext } from "@connectrpc/connect";

/**
 * The HTTP status of a successful REST answer, when it is not 200: an async execution is 202 and a sync
 * one answers with the status its response block set (D13, D15). gRPC and Connect have no such status,
 * so a handler records it as a context value that only the REST gateway reads.
 */
export const restStatusKey = createContextKey<number>(200, { description: "HTTP status of a REST success" });

export function setRestStatus(context: HandlerContext, status: number): void {
  context.values.set(restStatusKey, status);
}
