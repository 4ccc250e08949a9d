import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import type { BulkJobSchema } from "../../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { type FieldViolation, invalidArgument, preconditionFailed } from "../../errors/api-errors.js";
import { type BulkJobState, type BulkKind, maxBulkExecutions } from "../../temporal/bulk-job-ids.js";
import type { BulkJob } from "../../temporal/bulk-jobs.js";
import { isoFromMs } from "../../util/time.js";

/* D47: what the answers about bulk jobs of both kinds share: the cap, the one-at-a-time rule, the view. */

/** D47's cap, named with what to do about it. */
export function beyondLimit(executions: number, narrow: string): ConnectError {
  const violation: FieldViolation = {
    field: "filters",
    message:
      `the filters select ${executions} executions, more than the ${maxBulkExecutions} one bulk job takes ` +
      `(D47); ${narrow}, and start one job for each part`,
  };
  return invalidArgument([violation]);
}

/** D47: one job of a kind runs at a time in a workspace. */
export function jobRunning(kind: BulkKind, workspaceId: string, workflowId: string): ConnectError {
  return preconditionFailed({
    type: "BULK_JOB_RUNNING",
    subject: `workspace ${workspaceId}`,
    description:
      `workspace ${workspaceId} has a bulk ${kind} job running (${workflowId}); wait for it to end or ` +
      "cancel it before starting another (D47)",
  });
}

/** A job as GetBulkJob and the starts answer it. */
export function bulkJobView(job: BulkJob, state: BulkJobState): MessageInitShape<typeof BulkJobSchema> {
  const optionalIso = (ms: number | undefined) => (ms === undefined ? undefined : isoFromMs(ms));
  return {
    id: job.handle.workflowId,
    kind: state.kind,
    status: state.status,
    total: state.total,
    processed: state.done + state.failed,
    done: state.done,
    failed: state.failed,
    from: state.from,
    version: state.version,
    startedAt: isoFromMs(state.startedAt),
    endedAt: optionalIso(state.endedAt),
    waitingUntil: optionalIso(state.waitingUntil),
    lastFailure: state.lastFailure,
    stoppedReason: state.stoppedReason,
  };
}
