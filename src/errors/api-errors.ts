import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  PreconditionFailureSchema,
} from "../../gen/google/rpc/error_details_pb.js";

/**
 * Errors are values created where the fact is known (style.md); every protocol carries the
 * same code, and the REST gateway turns them into problem+json once (D10).
 */
export interface FieldViolation {
  /** The field as the client wrote it: the JSON / query parameter name. */
  field: string;
  message: string;
}

/**
 * invalid_argument with one google.rpc.BadRequest detail, so gRPC clients in any language
 * read the same field violations that REST clients get in `errors`.
 */
export function invalidArgument(violations: FieldViolation[]): ConnectError {
  const detail = create(BadRequestSchema, {
    fieldViolations: violations.map(({ field, message }) => ({ field, description: message })),
  });
  const summary = violations.map((v) => v.message).join("; ");
  return new ConnectError(summary, Code.InvalidArgument, undefined, [
    { desc: BadRequestSchema, value: detail },
  ]);
}

export function fieldViolations(error: ConnectError): FieldViolation[] {
  return error
    .findDetails(BadRequestSchema)
    .flatMap((detail) => detail.fieldViolations.map((v) => ({ field: v.field, message: v.description })));
}

/**
 * D26: a list parameter holds at most `max` values. The violation names the field and the limit, so a
 * client learns both at once; a longer list never reaches the store.
 */
export function listLengthViolations(
  field: string,
  values: readonly unknown[],
  max: number,
): FieldViolation[] {
  if (values.length <= max) return [];
  return [{ field, message: `${field} holds ${values.length} values; at most ${max} are allowed (D26)` }];
}

/** A count quota (D26) as a refusal names it: its FLOWLOG_QUOTAS path, who holds what, and how many. */
export interface CountQuota {
  /** The quota's path in FLOWLOG_QUOTAS, e.g. `workspace.subscriptions`. */
  quota: string;
  /** Who has reached it, e.g. `workspace ws_...`. */
  holder: string;
  /** What is counted, plural, e.g. `subscriptions`. */
  counted: string;
  count: number;
  max: number;
}

/**
 * D26: a count quota reached is failed_precondition (400 on REST), not resource_exhausted: waiting does
 * not help, deleting something or raising the quota does. The google.rpc.PreconditionFailure detail names
 * the quota by its FLOWLOG_QUOTAS path, so a gRPC client can tell which one without parsing the message.
 */
export function quotaReached({ quota, holder, counted, count, max }: CountQuota): ConnectError {
  const message = `${holder} has ${count} ${counted}, the most allowed is ${max} (D26 quota ${quota})`;
  return preconditionFailed({ type: "QUOTA", subject: quota, description: message });
}

/**
 * failed_precondition (400 on REST): a well-formed request the resource's state refuses, such as a secret
 * rotation on a subscription that has no webhook. The google.rpc.PreconditionFailure detail says which
 * precondition (`type`) of what (`subject`).
 */
export function preconditionFailed(violation: {
  type: string;
  subject: string;
  description: string;
}): ConnectError {
  const detail = create(PreconditionFailureSchema, { violations: [violation] });
  return new ConnectError(violation.description, Code.FailedPrecondition, undefined, [
    { desc: PreconditionFailureSchema, value: detail },
  ]);
}

/** The response header and google.rpc.ErrorInfo metadata key that carry an execution's id on an error. */
export const executionIdHeader = "Flowlog-Execution-Id";
const errorDomain = "flowlog";

/**
 * A sync execution that outlived the deadline its caller waits for: 504 deadline_exceeded. That is D26's
 * sync deadline, or the call's own when it sent a shorter one (`grpc-timeout`, `connect-timeout-ms`).
 * The execution goes on and is logged, so the error carries its executionId three ways: in the message,
 * in a response header, and in a google.rpc.ErrorInfo detail (the REST problem shows it as `executionId`).
 */
export function syncDeadlineExceeded(
  executionId: string,
  deadlineMs: number,
  whose: "sync" | "call" = "sync",
): ConnectError {
  const detail = create(ErrorInfoSchema, {
    reason: "SYNC_EXECUTION_DEADLINE_EXCEEDED",
    domain: errorDomain,
    metadata: { executionId },
  });
  return new ConnectError(
    `execution ${executionId} did not finish within ${whose === "sync" ? `the ${deadlineMs} ms a sync call waits` : "the call's own deadline"}; it goes on ` +
      `and is logged: read it later with GET /api/v1/logs?executionId=${executionId}`,
    Code.DeadlineExceeded,
    { [executionIdHeader]: executionId },
    [{ desc: ErrorInfoSchema, value: detail }],
  );
}

/** The executionId an error carries (syncDeadlineExceeded), if any. */
export function executionIdOf(error: ConnectError): string | undefined {
  return error.findDetails(ErrorInfoSchema).find((info) => info.domain === errorDomain)?.metadata.executionId;
}
