import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedWorkspace } from "../src/seed/seed.js";
import { type RestResponse, rest } from "./support/api-server.js";
import {
  createAccount,
  createWorkflow,
  execution,
  startFlowlog,
  steppingClock,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { ensureSchemathesis } from "./support/python.js";

// Issue 3: schemathesis, an outside tool that knows nothing of our code, reads the served OpenAPI document
// and sends the logs paths valid and invalid input; the document must describe every answer it gets.

/** The three logs paths, as the document spells them; nothing else is fuzzed here. */
const logsPaths = "^/api/v1/logs(/\\{id\\}|/executions/\\{executionId\\})?$";

/**
 * The checks that turn "no 5xx and no schema violation" into a verdict, by their schemathesis 4 names.
 * negative_data_rejection adds that what the document forbids is refused; ignored_auth, that no path
 * answers without a key; positive_data_acceptance, that what the document allows is accepted: the
 * document states the buf.validate rules of the .proto (issue 14), so a schema-valid value is a valid one.
 * Facts no schema can state are left to the configuration: a cursor is one this API issued, valid only
 * with the order it was issued for (hooks.py). Bad cursors are tested apart, in logs-api.test.ts; the
 * date pattern's agreement with the calendar D9 checks is tested below.
 */
const checks = [
  "not_a_server_error",
  "response_schema_conformance",
  "status_code_conformance",
  "content_type_conformance",
  "negative_data_rejection",
  "positive_data_acceptance",
  "ignored_auth",
];

/** A parameter, how often schemathesis takes one of the values instead of generating its own, the values. */
type Binding = [parameter: string, probability: number, values: (string | number)[]];

let flowlog: TestFlowlog;
let alice: TestAccount;
let schemathesis: string;
let config: string;
/** The order each real cursor was issued for, for hooks.py. */
let cursorOrders: Record<string, string>;

beforeAll(async () => {
  schemathesis = ensureSchemathesis();
  flowlog = await startFlowlog({ clock: steppingClock() });
  alice = await createAccount(flowlog.store);
  const now = Date.parse("2026-11-15T12:00:00.000Z");
  await seedWorkspace(flowlog.store, {
    workspaceId: alice.workspaceId,
    executions: 40,
    days: 3,
    seed: "fuzz",
    now,
  });
  // The seed rarely writes files; one row with files and a null final output puts both shapes in reach.
  const oddOne = execution(alice, await createWorkflow(flowlog.store, alice.workspaceId), {
    startedAt: now - 60_000,
    files: [{ name: "report.pdf", type: "application/pdf", size: 48_213, key: "executions/ex_1/report.pdf" }],
    finalOutput: null,
  });
  await flowlog.store.logs.insertExecution(oddOne);
  const bob = await createAccount(flowlog.store, "free");
  const bobs = execution(bob, await createWorkflow(flowlog.store, bob.workspaceId));
  await flowlog.store.logs.insertExecution(bobs);

  const desc = (await listLogs("limit=5&order=desc")).json as Page;
  const asc = (await listLogs("limit=5&order=asc")).json as Page;
  cursorOrders = { [desc.nextCursor]: "desc", [asc.nextCursor]: "asc" };
  const logIds = new Set([...desc.data.map((e) => e.id), oddOne.entry.id]);
  const executionIds = desc.data.map((e) => e.executionId);
  config = path.join(flowlog.dataDir, "schemathesis.toml");
  writeFileSync(
    config,
    schemathesisConfig(alice.key, [
      // Real ids often, so the 200 bodies are checked too; Bob's give the 404 (and his workspace the 403)
      // that D10 promises for what the key cannot see; generated ones give the 404 of an unknown id.
      ["path.id", 0.6, [...logIds, bobs.entry.id]],
      ["path.executionId", 0.6, [...executionIds, bobs.entry.executionId]],
      ["query.workspaceId", 0.9, [alice.workspaceId, alice.workspaceId, alice.workspaceId, bob.workspaceId]],
      // Realistic filters, so that some lists come back non-empty, in both forms (D9).
      ["query.executionId", 0.2, executionIds],
      ["query.cursor", 0.5, [desc.nextCursor, asc.nextCursor]],
      ["query.limit", 0.7, [1, 10, 1000]],
      ["query.order", 0.7, ["asc", "desc"]],
      ["query.details", 0.7, ["basic", "full"]],
      ["query.level", 0.7, ["info", "error"]],
      ["query.startDate", 0.7, ["2026-11-13T00:00:00.000Z", "2026-11-14"]],
      ["query.endDate", 0.7, ["2026-11-15T12:00:00.000Z", "2026-11-14T08:30:00+02:00"]],
      ["query.model", 0.3, ["gpt-4o", "claude-sonnet-4"]],
      ["query.minDurationMs", 0.7, [0, 1000]],
      ["query.maxDurationMs", 0.7, [3_600_000]],
      ["query.minCost", 0.7, [0, 0.001]],
      ["query.maxCost", 0.7, [100]],
    ]),
  );
});
afterAll(() => flowlog?.close());

describe("Logs read API under fuzzing: bad input never reaches a 5xx or an undocumented answer", () => {
  it("schemathesis finds no failing check on the three logs paths, positive and negative input alike", async () => {
    const documentUrl = `${flowlog.server.url}/api/v1/openapi.json`;
    const run = await runCommand(
      schemathesis,
      ["--config-file", config, "run", documentUrl, "--include-path-regex", logsPaths, "--no-color"],
      flowlog.dataDir,
      {
        SCHEMATHESIS_HOOKS: "hooks",
        PYTHONPATH: path.join(import.meta.dirname, "fuzz"),
        FLOWLOG_FUZZ_CURSOR_ORDERS: JSON.stringify(cursorOrders),
      },
    );
    expect(run.code, run.output).toBe(0);
    // A filter that matched nothing would also exit 0.
    expect(run.output).toMatch(/Tested: 3\b/);
  }, 120_000);
});

describe("Date filters (D9): a day the month lacks is a bad date, never rolled into the next month", () => {
  it("refuses the day after each month's last with 400 naming the field, and accepts the last; the document's pattern agrees", async () => {
    // The pattern is what schemathesis and generated clients trust: a date it allows must be one the
    // service accepts (a CI run once found 2688-04-31 allowed by the document and refused by D9).
    const document = (await rest(flowlog.server.url, "/api/v1/openapi.json")).json as OpenApiDocument;
    const endDate = document.paths["/api/v1/logs"]?.get.parameters.find((p) => p.name === "endDate");
    const pattern = new RegExp(endDate?.schema.pattern ?? "^$");
    const answers: string[] = [];
    const expected: string[] = [];
    for (const year of [2026, 2024, 2100, 2000, 2688]) {
      for (let month = 1; month <= 12; month++) {
        const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
        for (const [day, answer] of [
          [lastDay, "200 allowed"],
          [lastDay + 1, "400 endDate refused"],
        ] as const) {
          const date = `${year}-${twoDigits(month)}-${twoDigits(day)}`;
          const response = await listLogs(`limit=1&endDate=${date}`);
          const field = (response.json as { errors?: { field: string }[] }).errors?.[0]?.field;
          const documented = pattern.test(date) ? "allowed" : "refused";
          answers.push(`${date} ${[response.status, field, documented].filter(Boolean).join(" ")}`);
          expected.push(`${date} ${answer}`);
        }
      }
    }
    expect(answers).toEqual(expected);
  });
});

interface OpenApiDocument {
  paths: Record<string, { get: { parameters: { name: string; schema: { pattern?: string } }[] } }>;
}

interface Page {
  data: { id: string; executionId: string }[];
  nextCursor: string;
}

/** GET /api/v1/logs in Alice's workspace with her key. */
function listLogs(query: string): Promise<RestResponse> {
  return rest(flowlog.server.url, `/api/v1/logs?workspaceId=${alice.workspaceId}&${query}`, {
    headers: { "x-api-key": alice.key },
  });
}

function twoDigits(n: number): string {
  return String(n).padStart(2, "0");
}

/**
 * schemathesis.toml: a fixed seed, derandomized generation, no example database and a bounded number of
 * cases per operation, so a run repeats its inputs and takes seconds; both generation modes; the key for
 * the document's apiKey scheme. JSON strings and arrays are valid TOML values.
 */
function schemathesisConfig(apiKey: string, bindings: Binding[]): string {
  const dictionaryName = (parameter: string) => parameter.replace(".", "_");
  const dictionaries = bindings.flatMap(([parameter, , values]) => [
    `[dictionaries.${dictionaryName(parameter)}]`,
    `values = ${JSON.stringify(values)}`,
  ]);
  const parameters = bindings.map(
    ([parameter, probability]) =>
      `${JSON.stringify(parameter)} = { dictionary = "${dictionaryName(parameter)}", probability = ${probability} }`,
  );
  return [
    "seed = 20261115",
    "[generation]",
    'mode = "all"',
    "max-examples = 60",
    "deterministic = true",
    'database = "none"',
    "[auth.openapi.apiKey]",
    `api_key = ${JSON.stringify(apiKey)}`,
    "[checks]",
    "enabled = false",
    ...checks.map((check) => `${check}.enabled = true`),
    // The coverage phase builds boundary values for every parameter, a cursor too, before dictionaries
    // and hooks apply; its schema-valid cursors are made-up ones, rightly refused (D8).
    "[phases.coverage.checks]",
    "positive_data_acceptance.enabled = false",
    ...dictionaries,
    "[parameters]",
    ...parameters,
    "",
  ].join("\n");
}

/** Runs a command to its end; its exit code and everything it printed, for the failure message. */
function runCommand(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const options = { cwd, env: { ...process.env, ...env }, timeout: 110_000, maxBuffer: 16 * 1024 * 1024 };
    execFile(command, args, options, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });
}
