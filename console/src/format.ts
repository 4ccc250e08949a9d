/** How the console writes the API's figures: one place, so every page reads the same. */

export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return "–";
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;
}

/** Costs are in the plan's currency unit (dollars, D12); small ones keep their significant digits. */
export function formatCost(cost: number | undefined): string {
  if (cost === undefined) return "–";
  if (cost === 0) return "$0";
  return cost < 0.01 ? `$${cost.toPrecision(2)}` : `$${cost.toFixed(cost < 1 ? 4 : 2)}`;
}

/** A timestamp in the reader's own time zone, to the second; the ISO form stays in the title. */
export function formatTime(iso: string | undefined): string {
  if (!iso) return "–";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString(undefined, { hour12: false });
}

export function formatCount(n: number | bigint | undefined): string {
  return n === undefined ? "–" : Number(n).toLocaleString();
}

/** JSON for people: indented, with a cap so a huge block output cannot freeze the page. */
export function formatJson(value: unknown, maxChars = 20_000): string {
  const text = JSON.stringify(value, null, 2) ?? "null";
  return text.length > maxChars
    ? `${text.slice(0, maxChars)}\n… (${text.length - maxChars} more characters)`
    : text;
}
