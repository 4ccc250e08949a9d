import { STATUS_CODES } from "node:http";
import { Code, type ConnectError } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { executionIdOf, fieldViolations } from "./api-errors.js";

/** An RFC 9457 problem document as the REST paths return it (D10). */
export interface Problem {
  type: "about:blank";
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: { field: string; message: string }[];
  /** A sync execution past its deadline (504) names the execution that goes on. */
  executionId?: string;
}

/** D10 fixes the statuses; the rest follow the Connect protocol's table. */
const httpStatusByCode: Record<Code, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  // A sync execution past its deadline (D26, issue 11): the execution goes on.
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  // D26: a count quota reached is a 400, like any request the caller must change.
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

export function httpStatusOf(code: Code): number {
  return httpStatusByCode[code] ?? 500;
}

/** The problem for an error, optionally under another HTTP status (405 has no RPC code). */
export function problemFromError(error: ConnectError, statusOverride?: number): Problem {
  const status = statusOverride ?? httpStatusOf(error.code);
  const violations = error.code === Code.InvalidArgument ? fieldViolations(error) : [];
  const executionId = executionIdOf(error);
  return {
    type: "about:blank",
    title: STATUS_CODES[status] ?? "Error",
    status,
    detail: error.rawMessage,
    code: codeToString(error.code),
    ...(violations.length > 0 ? { errors: violations } : {}),
    ...(executionId !== undefined ? { executionId } : {}),
  };
}
