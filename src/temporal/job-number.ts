/**
 * The n of a numbered job's workflow id `<prefix><n>` (recovery-ids.ts, bulk-job-ids.ts), written as the
 * ids are made: decimal digits from 1, no sign, exponent, space or leading zero, so one job has one id. An
 * id that is not so is no job of the prefix's owner: undefined. Pure, for workflows and the API alike.
 */
export function jobNumberAfter(prefix: string, workflowId: string): number | undefined {
  if (!workflowId.startsWith(prefix)) return undefined;
  const digits = workflowId.slice(prefix.length);
  const n = Number(digits);
  return /^[1-9][0-9]*$/.test(digits) && Number.isSafeInteger(n) ? n : undefined;
}
