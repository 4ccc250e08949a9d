import { Code, ConnectError } from "@connectrpc/connect";

/**
 * The reason a finished call's signal is aborted with, by flowlog's own unary handlers (grpc-unary.ts,
 * json-unary.ts). Connect aborts it with none, and an abort without a reason builds a
 * `DOMException` (a stack capture) per call; nothing listens once the answer is written.
 */
export const callEnded = new ConnectError("the call has ended", Code.Canceled);

/**
 * What a call that threw answers, as Connect's handlers answer it: its `ConnectError`, or `internal` with
 * the thrown value kept as the cause and out of the answer.
 */
export function callError(thrown: unknown): ConnectError {
  return thrown instanceof ConnectError
    ? thrown
    : new ConnectError("internal error", Code.Internal, undefined, undefined, thrown);
}
