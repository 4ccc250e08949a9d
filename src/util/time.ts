/**
 * The one place timestamps are formatted for clients (D7): ISO 8601 with milliseconds and Z,
 * always, from the integer milliseconds the store keeps.
 */
export function isoFromMs(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Milliseconds of an ISO 8601 timestamp, or undefined when it does not parse. A time without an offset
 * is UTC, like a bare date: the answer must not depend on the server's time zone.
 */
export function msFromIso(text: string): number | undefined {
  const date = /^(\d{4})-(\d\d)-(\d\d)(T\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?)?$/.exec(text);
  if (!date || !isCalendarDay(Number(date[1]), Number(date[2]), Number(date[3]))) return undefined;
  const ms = Date.parse(date[4] !== undefined && date[7] === undefined ? `${text}Z` : text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Date.parse rolls a day the month lacks (2026-02-31) over into the next month; that is a bad date (D9). */
function isCalendarDay(year: number, month: number, day: number): boolean {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return days !== undefined && day >= 1 && day <= days;
}
