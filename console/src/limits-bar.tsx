import type { Limits, RateLimitBucket } from "../../gen/flowlog/logs/v1/limits_pb.js";
import { formatCost, formatTime } from "./format.js";

/**
 * The limits object every answer carries (D11, D12), on every page: the execution buckets and the
 * period's usage as of the last call. A screen reader hears a change without moving focus.
 */
export function LimitsBar({ limits }: { limits: Limits | undefined }) {
  if (!limits)
    return (
      <p class="limits" aria-live="polite">
        Limits appear with the first answer.
      </p>
    );
  const { usage, workflowExecutionRateLimit: rate } = limits;
  return (
    <dl class="limits" aria-live="polite" aria-label="Plan limits and usage">
      <div>
        <dt>Plan</dt>
        <dd>{usage?.plan ?? "–"}</dd>
      </div>
      <div>
        <dt>Cost this period</dt>
        <dd class={usage?.isExceeded ? "exceeded" : undefined}>
          {formatCost(usage?.currentPeriodCost)} of {formatCost(usage?.limit)}
          {usage?.isExceeded ? " (exceeded)" : ""}
        </dd>
      </div>
      <Bucket name="Sync executions" bucket={rate?.syncExecutions} />
      <Bucket name="Async executions" bucket={rate?.asyncExecutions} />
    </dl>
  );
}

function Bucket({ name, bucket }: { name: string; bucket: RateLimitBucket | undefined }) {
  return (
    <div>
      <dt>{name}</dt>
      <dd title={bucket ? `${bucket.requestsPerMinute} per minute, resets ${bucket.resetAt}` : undefined}>
        {bucket
          ? `${bucket.remaining} of ${bucket.maxBurst} left, full at ${formatTime(bucket.resetAt)}`
          : "–"}
      </dd>
    </div>
  );
}
