import { type Command, InvalidArgumentError, Option } from "commander";
import { levels, triggers } from "../../store/records.js";

/** ListLogs' filters as the CLI's options give them (list and tail take the same ones, D44). */
export interface FilterOptions {
  workspace: string;
  workflow?: string[];
  folder?: string[];
  trigger?: string[];
  level?: string;
  since?: string;
  until?: string;
  execution?: string;
  minDurationMs?: number;
  maxDurationMs?: number;
  minCost?: number;
  maxCost?: number;
  model?: string;
  search?: string;
  details?: string;
  traceSpans?: boolean;
  finalOutput?: boolean;
}

/** Adds the filter options to `command`; each value is checked here, so a bad one exits 2 naming its option. */
export function addFilterOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--workspace <id>", "the workspace to read").env("FLOWLOG_WORKSPACE").makeOptionMandatory(),
    )
    .option("--workflow <id...>", "only these workflows (repeat, or separate with commas)", list)
    .option("--folder <id...>", "only the workflows of these folders", list)
    .option(`--trigger <trigger...>`, `only these triggers: ${triggers.join(", ")}`, listOf(triggers))
    .addOption(new Option("--level <level>", "only this level").choices(levels))
    .option("--since <time>", "started at or after: ISO 8601, or a duration ago (30m, 12h, 7d)", moment)
    .option("--until <time>", "started at or before: ISO 8601, or a duration ago", moment)
    .option("--execution <id>", "only this execution")
    .option("--min-duration-ms <n>", "at least this long", wholeNumber)
    .option("--max-duration-ms <n>", "at most this long", wholeNumber)
    .option("--min-cost <usd>", "cost at least this (USD)", amount)
    .option("--max-cost <usd>", "cost at most this (USD)", amount)
    .option("--model <name>", "only entries that used this model")
    .option("-q, --search <words>", "only entries holding every word (D45 search; `timeout*` a prefix)")
    .addOption(
      new Option("--details <form>", "basic or full (workflow, tokens and models)").choices([
        "basic",
        "full",
      ]),
    )
    .option("--trace-spans", "include each entry's trace spans")
    .option("--final-output", "include each entry's final output");
}

/** The query parameters of GET /api/v1/logs (and :tail) for `options`, as docs/logs-api.md names them. */
export function filterQuery(options: FilterOptions): URLSearchParams {
  const query = new URLSearchParams({ workspaceId: options.workspace });
  const set = (name: string, value: string | number | boolean | undefined) => {
    if (value !== undefined) query.set(name, String(value));
  };
  set("workflowIds", options.workflow?.join(","));
  set("folderIds", options.folder?.join(","));
  set("triggers", options.trigger?.join(","));
  set("level", options.level);
  set("startDate", options.since);
  set("endDate", options.until);
  set("executionId", options.execution);
  set("minDurationMs", options.minDurationMs);
  set("maxDurationMs", options.maxDurationMs);
  set("minCost", options.minCost);
  set("maxCost", options.maxCost);
  set("model", options.model);
  set("q", options.search);
  set("details", options.details);
  set("includeTraceSpans", options.traceSpans);
  set("includeFinalOutput", options.finalOutput);
  return query;
}

/** Values given by repeating the option, by commas, or both. */
function list(value: string, previous: string[] | undefined): string[] {
  const items = value.split(",").map((item) => item.trim());
  if (items.some((item) => item === "")) throw new InvalidArgumentError("must not be empty");
  return [...(previous ?? []), ...items];
}

function listOf(allowed: readonly string[]) {
  return (value: string, previous: string[] | undefined): string[] => {
    const items = list(value, previous);
    const wrong = items.find((item) => !allowed.includes(item));
    if (wrong !== undefined) throw new InvalidArgumentError(`${wrong} is not one of ${allowed.join(", ")}`);
    return items;
  };
}

export function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("must be a whole number");
  return Number(value);
}

function amount(value: string): number {
  const usd = value.trim() === "" ? Number.NaN : Number(value);
  if (!Number.isFinite(usd) || usd < 0) throw new InvalidArgumentError("must be a number of USD, 0 or more");
  return usd;
}

const durationUnits: Record<string, number> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * A moment as the API takes it: ISO 8601 as given (the API checks the calendar), or a duration before
 * now, turned into the ISO time it names.
 */
function moment(value: string): string {
  const duration = /^(\d+)([smhdw])$/.exec(value);
  if (duration) {
    const ago = Number(duration[1]) * (durationUnits[duration[2] as string] as number);
    return new Date(Date.now() - ago).toISOString();
  }
  if (/^\d{4}-\d\d-\d\d(T\S+)?$/.test(value) && !Number.isNaN(Date.parse(value))) return value;
  throw new InvalidArgumentError("must be an ISO 8601 date or time, or a duration like 30m, 12h or 7d");
}
