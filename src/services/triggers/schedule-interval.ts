/**
 * D26: the runs of one schedule are at least `minScheduleIntervalSeconds` apart. Temporal parses the cron
 * string itself (ScheduleSpec.cron_string); this reads the parts that decide how often it fires, the way
 * Temporal does: `@every <interval>[/<phase>]`; @hourly, @daily and the other shorthands; 5 fields
 * (minute, hour, day of month, month, day of week), 6 (and a year) or 7 (a second first, then the six).
 */

const secondsPerDay = 86_400;
const unitSeconds: Record<string, number> = { s: 1, m: 60, h: 3600, d: secondsPerDay };
/** Shorthands at their shortest: the day-level ones never fire twice in a day. */
const shorthandSeconds: Record<string, number> = {
  "@hourly": 3600,
  "@daily": secondsPerDay,
  "@midnight": secondsPerDay,
  "@weekly": secondsPerDay,
  "@monthly": secondsPerDay,
  "@yearly": secondsPerDay,
  "@annually": secondsPerDay,
};

export type ScheduleFrequency = { shortestGapSeconds: number } | { unreadable: string };

/**
 * The shortest time between two runs of the schedule, or at least a lower bound of it: the day, month and
 * weekday fields are not read, so a gap across midnight counts as if the next day matched (a rare cron is
 * judged as if it fired daily, which only errs towards refusing). A part it cannot read is reported rather
 * than let through: a quota must not depend on syntax it does not understand. A string that is no cron
 * at all is left to Temporal to refuse (undefined).
 */
export function scheduleFrequency(cron: string): ScheduleFrequency | undefined {
  // Temporal allows a CRON_TZ= or TZ= prefix and a trailing # comment around the spec.
  const spec = cron
    .replace(/#.*$/, "")
    .replace(/^\s*(CRON_)?TZ=\S+/, "")
    .trim();
  if (spec.startsWith("@every")) return everyFrequency(spec.slice("@every".length).trim());
  const shorthand = shorthandSeconds[spec];
  if (shorthand !== undefined) return { shortestGapSeconds: shorthand };
  const fields = spec.split(/\s+/);
  if (fields.length < 5 || fields.length > 7) return undefined;
  const [second, minute, hour] = fields.length === 7 ? fields : ["0", ...fields];
  const seconds = valuesOf(second as string, 59);
  const minutes = valuesOf(minute as string, 59);
  const hours = valuesOf(hour as string, 23);
  if (!seconds || !minutes || !hours) {
    return {
      unreadable: "its second, minute or hour field is not a list of *, n, a-b with an optional /step",
    };
  }
  return { shortestGapSeconds: shortestGap(hours, minutes, seconds) };
}

/** `@every 90s`, `@every 1h30m`, optionally `/<phase>`: a whole number with a unit, or several. */
function everyFrequency(text: string): ScheduleFrequency {
  const interval = text.split("/")[0] ?? "";
  const parts = [...interval.matchAll(/(\d+)([smhd])/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join("") !== interval) {
    return { unreadable: `@every needs an interval such as 5m or 1h30m, not "${interval}"` };
  }
  const seconds = parts.reduce(
    (sum, [, count, unit]) => sum + Number(count) * (unitSeconds[unit as string] ?? 0),
    0,
  );
  return { shortestGapSeconds: seconds };
}

/** The shortest gap between the fire times of one day, and from the day's last to the next day's first. */
function shortestGap(hours: number[], minutes: number[], seconds: number[]): number {
  const times = hours.flatMap((h) => minutes.flatMap((m) => seconds.map((s) => h * 3600 + m * 60 + s)));
  let shortest = (times[0] as number) + secondsPerDay - (times[times.length - 1] as number);
  for (let i = 1; i < times.length; i++)
    shortest = Math.min(shortest, (times[i] as number) - (times[i - 1] as number));
  return shortest;
}

/**
 * The values, ascending, that one field matches from 0 to `max`: a comma list of `*`, `n` or `a-b`, each
 * with an optional `/step` (`n/step` runs from n to max). Undefined for anything else.
 */
function valuesOf(field: string, max: number): number[] | undefined {
  const matched = new Set<number>();
  for (const item of field.split(",")) {
    const parts = /^(\*|\d+)(?:-(\d+))?(?:\/(\d+))?$/.exec(item);
    if (!parts) return undefined;
    const [, start, end, step] = parts;
    const from = start === "*" ? 0 : Number(start);
    const to = end !== undefined ? Number(end) : start === "*" || step !== undefined ? max : from;
    const by = step === undefined ? 1 : Number(step);
    if (by < 1 || from > to || to > max) return undefined;
    for (let value = from; value <= to; value += by) matched.add(value);
  }
  return [...matched].sort((a, b) => a - b);
}
