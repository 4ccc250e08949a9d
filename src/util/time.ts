const dayMs = 86_400_000;
/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the years written with four digits. */
const fourDigitYears = { first: -62_167_219_200_000, last: 253_402_300_799_999 };
/** The date part of the last day formatted: timestamps come in runs from the same day. */
let lastDay = { day: Number.NaN, prefix: "" };

/**
 * The one place timestamps are formatted for clients (D7): ISO 8601 with milliseconds and Z,
 * always, from the integer milliseconds the store keeps. Exactly Date#toISOString, written out for
 * four-digit years because the seeder formats millions of span times and the Date costs most of it.
 */
export function isoFromMs(ms: number): string {
  if (!Number.isInteger(ms) || ms < fourDigitYears.first || ms > fourDigitYears.last) {
    return new Date(ms).toISOString();
  }
  const day = Math.floor(ms / dayMs);
  if (day !== lastDay.day) lastDay = { day, prefix: datePrefix(day) };
  let rest = ms - day * dayMs;
  const milli = rest % 1000;
  rest = (rest - milli) / 1000;
  const second = rest % 60;
  rest = (rest - second) / 60;
  const minute = rest % 60;
  const hour = (rest - minute) / 60;
  return `${lastDay.prefix}${twoDigits(hour)}:${twoDigits(minute)}:${twoDigits(second)}.${threeDigits(milli)}Z`;
}

// No lookup tables: every Temporal workflow evaluates this module afresh, and building them cost each
// execution about 0.4 ms of the worker's time (the execution bench's profile); these are as fast.
function twoDigits(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}

function threeDigits(n: number): string {
  return n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`;
}

/** The UTC calendar day of a time as ISO 8601 writes it, `YYYY-MM-DD` (D7's timestamps, cut at the day). */
export function isoDayFromMs(ms: number): string {
  return isoFromMs(ms).slice(0, 10);
}

/** `YYYY-MM-DDT` of a day counted from 1970-01-01 (the civil-from-days algorithm of H. Hinnant). */
function datePrefix(day: number): string {
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  // The leap days before this one in its era: every 4th year, but not every 100th, yet every 400th.
  const leapDays =
    Math.floor(dayOfEra / 1460) - Math.floor(dayOfEra / 36_524) + Math.floor(dayOfEra / 146_096);
  const yearOfEra = Math.floor((dayOfEra - leapDays) / 365);
  const dayOfYear = dayOfEra - 365 * yearOfEra - Math.floor(yearOfEra / 4) + Math.floor(yearOfEra / 100);
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const dayOfMonth = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${String(year).padStart(4, "0")}-${twoDigits(month)}-${twoDigits(dayOfMonth)}T`;
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
