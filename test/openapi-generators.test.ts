import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureOpenApiPythonClient, runPython } from "./support/python.js";
import { type ServeProcess, startServeProcess } from "./support/serve-process.js";

/**
 * Issue 55, item 2: the OpenAPI document as the generators a new user reaches for take it. openapi-python-
 * client (PyPI) and openapi-typescript (npm) generate clients from the document a real `flowlog serve`
 * serves; each must have every operation and every schema of that document, with typed answers (D48), and
 * the generated Python client reads the logs endpoints' real answers whole. Both generate once for the file.
 */

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, "..");
const scripts = path.join(repoRoot, "test", "openapi-generators");
/** Enough that each filtered page below has entries whatever the draw (at 30, one run in 12 had no error). */
const seeded = 100;

// biome-ignore lint/suspicious/noExplicitAny: the document is JSON that the assertions themselves check.
type Json = { [key: string]: any };

interface Operation {
  path: string;
  method: string;
  id: string;
  /** The 200 answer's content, by media type. */
  answers: Record<string, Json>;
}

/** What inspect_client.py found in the generated Python package. */
interface PythonInspection {
  operations: Record<string, { functions: boolean; answers: string[] }>;
  schemas: Record<string, string | null>;
}

/** One call's answer as call_logs.py read it. */
interface PythonAnswer {
  class: string;
  json: Json;
  unknownFields: string[];
}

let serve: ServeProcess;
let account: { workspaceId: string; key: string };
let scratch: string;
let document: Json;
let operations: Operation[];
let pythonBin: string;
let pythonPackage: string;
let pythonGeneration: string;
let typescriptGeneration: { stdout: string; stderr: string };
let inspection: PythonInspection;

const METHODS = ["get", "put", "post", "delete", "patch"];
const SCHEMA_REF = "#/components/schemas/";

function listOperations(doc: Json): Operation[] {
  return Object.entries(doc.paths as Json).flatMap(([route, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({
        path: route,
        method,
        id: operation.operationId as string,
        answers: operation.responses["200"].content as Record<string, Json>,
      })),
  );
}

/** The component a schema refers to, or undefined for an inline schema. */
function refName(schema: Json): string | undefined {
  const ref = schema.$ref as string | undefined;
  return ref?.startsWith(SCHEMA_REF) ? ref.slice(SCHEMA_REF.length) : undefined;
}

async function flowlog(args: string[]): Promise<string> {
  const env = { ...process.env, FLOWLOG_DATA_DIR: serve.dataDir, FLOWLOG_LOG_LEVEL: "warn" };
  const { stdout } = await run(process.execPath, ["bin/flowlog.js", ...args], { cwd: repoRoot, env });
  return stdout;
}

/** The API's own answer to GET `pathAndQuery`, with the key. */
async function api(pathAndQuery: string): Promise<Json> {
  const response = await fetch(`${serve.url}${pathAndQuery}`, { headers: { "x-api-key": account.key } });
  expect(response.status, pathAndQuery).toBe(200);
  return (await response.json()) as Json;
}

/** openapi-python-client on the served document, with its ruff on PATH for the formatting it runs after. */
async function generatePython(documentUrl: string): Promise<string> {
  const env = { ...process.env, PATH: `${pythonBin}${path.delimiter}${process.env.PATH ?? ""}` };
  const generator = path.join(pythonBin, "openapi-python-client");
  const args = ["generate", "--url", documentUrl, "--meta", "none", "--output-path", pythonPackage];
  const { stdout, stderr } = await run(generator, args, { env });
  return `${stdout}${stderr}`;
}

/** openapi-typescript's CLI from node_modules on the served document. */
async function generateTypeScript(documentUrl: string, output: string) {
  const cli = path.join(repoRoot, "node_modules", "openapi-typescript", "bin", "cli.js");
  return run(process.execPath, [cli, documentUrl, "--output", output]);
}

beforeAll(async () => {
  serve = await startServeProcess();
  const made = JSON.parse(await flowlog(["bootstrap", "--json", "--plan", "enterprise"])) as Json;
  account = { workspaceId: made.workspace.id, key: made.key };
  // The seed is fixed, but the draw is keyed by the workspace too (seed.ts), so it differs from run to run.
  await flowlog([
    "seed",
    ...["--workspace", account.workspaceId, "--executions", `${seeded}`, "--seed", "openapi-generators"],
  ]);
  pythonBin = ensureOpenApiPythonClient();
  scratch = mkdtempSync(path.join(tmpdir(), "flowlog-openapi-generators-"));
  // call_logs.py imports it by this name, as its users would.
  pythonPackage = path.join(scratch, "flowlog_api");
  mkdirSync(path.join(scratch, "ts"));

  const documentUrl = `${serve.url}/api/v1/openapi.json`;
  document = (await (await fetch(documentUrl)).json()) as Json;
  operations = listOperations(document);
  const documentFile = path.join(scratch, "openapi.json");
  writeFileSync(documentFile, JSON.stringify(document));
  [pythonGeneration, typescriptGeneration] = await Promise.all([
    generatePython(documentUrl),
    generateTypeScript(documentUrl, path.join(scratch, "ts", "flowlog-api.ts")),
  ]);
  inspection = JSON.parse(
    await runPython(
      path.join(pythonBin, "python"),
      [path.join(scripts, "inspect_client.py"), documentFile, pythonPackage],
      "",
    ),
  ) as PythonInspection;
});
afterAll(async () => {
  await serve?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("openapi-python-client", () => {
  it("generates the served document without a warning", () => {
    expect(pythonGeneration).toContain("Generating");
    expect(pythonGeneration).not.toMatch(/warning|unable|could not|skipping/i);
  });

  it("every operation of the document is a function answering the model of its 200 answer", () => {
    expect(Object.keys(inspection.operations).sort()).toEqual(operations.map((o) => o.id).sort());
    for (const operation of operations) {
      const generated = inspection.operations[operation.id];
      expect(generated?.functions, operation.id).toBe(true);
      const json = operation.answers["application/json"];
      if (json === undefined) {
        // A stream's answer (D44's events, D45's file) is text in OpenAPI 3.1, which has no item schema.
        expect(generated?.answers, operation.id).toEqual(["str"]);
        continue;
      }
      const component = refName(json.schema);
      if (component === undefined) {
        expect(generated?.answers, operation.id).toHaveLength(1);
        expect(generated?.answers, operation.id).not.toContain("Any");
      } else {
        expect(generated?.answers, operation.id).toEqual([inspection.schemas[component]]);
      }
    }
  });

  it("every object schema of the document is a model class; a Value, any JSON (D48), is Python's Any", () => {
    const schemas = Object.entries(document.components.schemas as Record<string, Json>);
    const dropped = schemas.filter(([name, schema]) => schema.type === "object" && !inspection.schemas[name]);
    expect(dropped.map(([name]) => name)).toEqual([]);
    const untyped = schemas.filter(([, schema]) => schema.type === undefined).map(([name]) => name);
    expect(untyped).toEqual(["google.protobuf.Value"]);
    expect(inspection.schemas["google.protobuf.Value"]).toBeNull();
  });
});

describe("openapi-typescript", () => {
  it("generates the served document without a warning", () => {
    expect(`${typescriptGeneration.stdout}${typescriptGeneration.stderr}`).not.toMatch(/warn|error|⚠/i);
  });

  // The probe is derived from the document: tsc fails on a path, operation or schema that is missing, and
  // on an answer typed never, any or unknown.
  it("has every path, operation and schema with typed answers, and tsc checks it", async () => {
    writeFileSync(path.join(scratch, "ts", "probe.ts"), typeScriptProbe(document, operations));
    const tsc = path.join(repoRoot, "node_modules", "typescript", "bin", "tsc");
    const options = ["--noEmit", "--strict", "--target", "es2022", "--module", "nodenext"];
    const checked = await run(process.execPath, [tsc, ...options, "probe.ts"], {
      cwd: path.join(scratch, "ts"),
    }).then(
      () => "",
      (error: { stdout: string }) => error.stdout,
    );
    expect(checked).toBe("");
  });
});

/** TypeScript that compiles only when the generated types hold every part of the document, typed. */
function typeScriptProbe(doc: Json, all: Operation[]): string {
  const q = (text: string) => JSON.stringify(text);
  const schema = (name: string) => `components["schemas"][${q(name)}]`;
  const checks: string[] = [];
  for (const operation of all) {
    const generated = `operations[${q(operation.id)}]`;
    checks.push(`Same<paths[${q(operation.path)}][${q(operation.method)}], ${generated}>`);
    for (const [mediaType, content] of Object.entries(operation.answers)) {
      const answer = `${generated}["responses"][200]["content"][${q(mediaType)}]`;
      const component = refName(content.schema);
      checks.push(component ? `Same<${answer}, ${schema(component)}>` : `Typed<${answer}>`);
    }
  }
  const samples: string[] = [];
  for (const [name, definition] of Object.entries(doc.components.schemas as Record<string, Json>)) {
    // D48: a Value is any JSON, which TypeScript calls unknown; every other schema has a type.
    checks.push(definition.type === undefined ? `Same<${schema(name)}, unknown>` : `Typed<${schema(name)}>`);
    // A Struct (any JSON object) takes keys of its own, which a bare `type: object` would refuse.
    if (definition.additionalProperties === true && definition.required === undefined) {
      samples.push(`({ anyKey: [1, "two", { three: null }] }) satisfies ${schema(name)};`);
    }
  }
  return [
    'import type { components, operations, paths } from "./flowlog-api.js";',
    "type Expect<T extends true> = T;",
    "type Typed<T> = [T] extends [never] ? false : unknown extends T ? false : true;",
    "type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;",
    ...checks.map((check, index) => `export type Check${index} = Expect<${check}>;`),
    ...samples,
    "",
  ].join("\n");
}

describe("the logs endpoints through the generated Python client, against flowlog serve", () => {
  let answers: {
    lists: Record<string, PythonAnswer>;
    followed: string[];
    log: PythonAnswer;
    execution: PythonAnswer;
    missing: PythonAnswer;
  };

  beforeAll(async () => {
    const schemas = document.components.schemas as Record<string, Json>;
    // Models whose schema lists its properties and no others: a field they did not know is one the
    // document left out.
    const closedClasses = Object.entries(schemas)
      .filter(([, schema]) => schema.type === "object" && schema.additionalProperties === undefined)
      .map(([name]) => inspection.schemas[name]);
    const input = { packagesDir: scratch, baseUrl: serve.url, ...account, closedClasses };
    const output = await runPython(
      path.join(pythonBin, "python"),
      [path.join(scripts, "call_logs.py")],
      JSON.stringify(input),
    );
    answers = JSON.parse(output);
  });

  const className = (schema: string) => inspection.schemas[schema];

  it("lists with filters: typed pages holding exactly what the API answers to the same query", async () => {
    for (const [query, answer] of Object.entries(answers.lists)) {
      expect(answer.class, query).toBe(className("flowlog.logs.v1.ListLogsResponse"));
      expect(answer.unknownFields, query).toEqual([]);
      const page = await api(`/api/v1/logs?workspaceId=${account.workspaceId}&${query}`);
      expect(page.data.length, query).toBeGreaterThan(0);
      expect(comparable(answer.json), query).toEqual(comparable(page));
    }
  });

  it("follows nextCursor through every page, each entry once", async () => {
    const everything = await api(`/api/v1/logs?workspaceId=${account.workspaceId}&limit=1000`);
    expect(everything.data).toHaveLength(seeded);
    expect(answers.followed).toEqual(everything.data.map((entry: Json) => entry.id));
  });

  it("gets one entry and its execution, typed and whole", async () => {
    expect(answers.log.class).toBe(className("flowlog.logs.v1.GetLogResponse"));
    expect(answers.log.unknownFields).toEqual([]);
    const log = await api(`/api/v1/logs/${answers.log.json.data.id}`);
    expect(comparable(answers.log.json.data)).toEqual(comparable(log.data));

    expect(answers.execution.class).toBe(className("flowlog.logs.v1.GetExecutionResponse"));
    expect(answers.execution.unknownFields).toEqual([]);
    const execution = await api(`/api/v1/logs/executions/${log.data.executionId}`);
    expect(comparable(answers.execution.json)).toEqual(comparable(execution));
  });

  it("an unknown id answers a typed problem with status 404 (D10)", () => {
    expect(answers.missing.class).toBe(className("Problem"));
    expect(answers.missing.json).toMatchObject({ status: 404, code: "not_found" });
  });
});

const ISO_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/**
 * An answer as two reads of it can be compared: without `limits`, whose rate-limit buckets change between
 * two calls, and with each instant as the instant it names, since the client reads date-time fields into
 * datetimes and writes them back in Python's form (`+00:00`, microseconds).
 */
function comparable(value: unknown): unknown {
  if (typeof value === "string") return ISO_INSTANT.test(value) ? new Date(value).toISOString() : value;
  if (Array.isArray(value)) return value.map(comparable);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).filter(([key]) => key !== "limits");
  return Object.fromEntries(entries.map(([key, item]) => [key, comparable(item)]));
}
