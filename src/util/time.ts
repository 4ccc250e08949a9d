/**
 * The one place timestamps are formatted for clients (D7): ISO 8601 with milliseconds and Z,
 * always, from the integer milliseconds the store keeps.
 */
export function isoFromMs(ms: number): string {
  return new Date(ms).toISOString();
}

/** Milliseconds of an ISO 8601 timestamp, or undefined when it does not parse. */
export function msFromIso(text: string): number | undefined {
  if (!/^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?)?$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
