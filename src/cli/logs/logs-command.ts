import { type Command, InvalidArgumentError, Option } from "commander";
import { untilStopSignal } from "../signals.js";
import { type ApiConnection, ApiProblem, getJson, Unreachable } from "./api.js";
import { entryDetailText } from "./entry-detail.js";
import type { EntryJson } from "./entry-json.js";
import { addFilterOptions, type FilterOptions, filterQuery, wholeNumber } from "./filters.js";
import { followTail } from "./follow-tail.js";
import { LogTable } from "./log-table.js";

interface ConnectionOptions {
  url: string;
  apiKey: string;
  json?: boolean;
}

interface ListOptions extends FilterOptions, ConnectionOptions {
  order?: string;
  limit?: number;
  cursor?: string;
  all?: boolean;
}

interface ListPage {
  data: EntryJson[];
  nextCursor?: string;
}

/**
 * `flowlog logs list|get|tail` (issue 55): the logs read over the public API with a key, as any client
 * reads them (like `stripe logs tail`), so an operator can look without curl. A table for people,
 * NDJSON (each entry as the API answers it) with --json. An API refusal prints its problem (status,
 * code, detail) and exits 1; a bad option exits 2, as every command's usage errors do (main.ts).
 */
export function registerLogsCommand(program: Command): void {
  const logs = program
    .command("logs")
    .description("read a workspace's logs over the API with a key: list, get one, follow new ones");

  connectionOptions(addFilterOptions(logs.command("list")))
    .description("list log entries, newest first, a page at a time (or every page with --all)")
    .addOption(new Option("--order <order>", "by startedAt then id").choices(["desc", "asc"]))
    .option("--limit <n>", "entries per page, 1 to 1000 (default 100)", pageSize)
    .option("--cursor <cursor>", "continue from a page's nextCursor (with the same order)")
    .option("--all", "follow nextCursor to the last page, printing each page as it arrives")
    .action(apiAction((options: ListOptions) => listLogs(options)));

  connectionOptions(logs.command("get"))
    .description("one log entry in its detail form: workflow, cost per model, trace spans, output")
    .argument("<id>", "the entry's id (log_...)")
    .action(
      apiAction(async (id: string, options: ConnectionOptions) => {
        const { data } = await getJson<{ data: EntryJson }>(
          connectionOf(options),
          `/api/v1/logs/${encodeURIComponent(id)}`,
        );
        console.log(options.json ? JSON.stringify(data) : entryDetailText(data));
      }),
    );

  connectionOptions(addFilterOptions(logs.command("tail")))
    .description("follow new log entries as they are written, resuming on its own, until Ctrl-C")
    .action(
      apiAction(async (options: FilterOptions & ConnectionOptions) => {
        const stop = new AbortController();
        void untilStopSignal().then(() => stop.abort());
        await followTail({
          connection: connectionOf(options),
          query: tableQuery(filterQuery(options), options),
          onEntry: entryPrinter(options),
          notice: (text) => console.error(`flowlog: ${text}`),
          signal: stop.signal,
        });
      }),
    );
}

function connectionOptions(command: Command): Command {
  return command
    .addOption(
      new Option("--url <url>", "the flowlog API")
        .env("FLOWLOG_URL")
        .default("http://localhost:8080")
        .argParser(httpUrl),
    )
    .addOption(
      new Option(
        "--api-key <key>",
        "the API key; prefer setting FLOWLOG_API_KEY, as an option shows in the process list and shell history",
      )
        .env("FLOWLOG_API_KEY")
        .makeOptionMandatory(),
    )
    .option("--json", "print NDJSON: each entry on a line, as the API answers it");
}

async function listLogs(options: ListOptions): Promise<void> {
  const connection = connectionOf(options);
  const query = tableQuery(filterQuery(options), options);
  if (options.order !== undefined) query.set("order", options.order);
  if (options.limit !== undefined) query.set("limit", String(options.limit));
  const print = entryPrinter(options);
  let cursor = options.cursor;
  do {
    if (cursor !== undefined) query.set("cursor", cursor);
    const page = await getJson<ListPage>(connection, "/api/v1/logs", query);
    for (const entry of page.data) print(entry);
    cursor = page.nextCursor;
  } while (options.all && cursor !== undefined);
  if (cursor !== undefined)
    console.error(`flowlog: more entries: add --cursor ${cursor}, or --all for every page`);
}

/** The table shows workflows by name, which details=full adds, unless the caller chose the form. */
function tableQuery(query: URLSearchParams, options: { json?: boolean; details?: string }): URLSearchParams {
  if (!options.json && options.details === undefined) query.set("details", "full");
  return query;
}

function entryPrinter(options: { json?: boolean }): (entry: EntryJson) => void {
  if (options.json) return (entry) => console.log(JSON.stringify(entry));
  const table = new LogTable();
  return (entry) => table.print(entry);
}

function connectionOf(options: ConnectionOptions): ApiConnection {
  return { url: options.url, apiKey: options.apiKey };
}

/** An API refusal or an unreachable server is an answer, not a fault: one line on stderr, exit 1. */
function apiAction<A extends unknown[]>(action: (...args: A) => Promise<void>) {
  return async (...args: A): Promise<void> => {
    process.stdout.on("error", stopWhenOutputCloses);
    try {
      await action(...args);
    } catch (error) {
      if (!(error instanceof ApiProblem || error instanceof Unreachable)) throw error;
      console.error(`error: ${error.message}`);
      process.exitCode = 1;
    }
  };
}

/** A reader that has seen enough (`| head`) closes the pipe: nothing is left to print, and no fault. */
function stopWhenOutputCloses(error: NodeJS.ErrnoException): void {
  if (error.code !== "EPIPE") throw error;
  process.exit(0);
}

function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError("must be an http:// or https:// URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new InvalidArgumentError("must be an http:// or https:// URL");
  return value;
}

function pageSize(value: string): number {
  const n = wholeNumber(value);
  if (n < 1 || n > 1000) throw new InvalidArgumentError("must be from 1 to 1000");
  return n;
}
