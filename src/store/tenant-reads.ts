import { QueryTimeoutError } from "../errors/query-timeout.js";

/**
 * What a read that grows with a tenant's data says when it runs past its time (D46), on either store:
 * 504 `deadline_exceeded` naming what to narrow. Nothing was written; the same request would take as
 * long again.
 */
export function listOverTime(limitMs: number): QueryTimeoutError {
  return new QueryTimeoutError(
    `the list read for more than ${limitMs / 1_000} s: narrow it with startDate and endDate, or filter by workflow`,
  );
}

export function statsOverTime(limitMs: number): QueryTimeoutError {
  return new QueryTimeoutError(
    `the stats read for more than ${limitMs / 1_000} s: narrow the range (startDate, endDate) or filter by workflow or level`,
  );
}

export function deliveriesOverTime(limitMs: number): QueryTimeoutError {
  return new QueryTimeoutError(
    `the delivery log read for more than ${limitMs / 1_000} s: narrow it with startDate and endDate, or filter by subscription or status`,
  );
}

export function workflowsOverTime(limitMs: number): QueryTimeoutError {
  return new QueryTimeoutError(
    `the workflow list read for more than ${limitMs / 1_000} s: filter it by folder`,
  );
}
