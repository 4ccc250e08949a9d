import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, describe, expect, it } from "vitest";
import { runBufGenerate } from "../scripts/check-generated.js";
import { listHttpRoutes } from "../src/gateway/http-rules.js";
import { apiServices } from "../src/server/api-services.js";

// biome-ignore lint/suspicious/noExplicitAny: the document is JSON that the assertions themselves check.
type Json = { [key: string]: any };

const root = fileURLToPath(new URL("..", import.meta.url));
const documentFile = "gen/openapi/flowlog.openapi.json";
const document = readDocument(root);

function readDocument(dir: string): Json {
  return JSON.parse(readFileSync(join(dir, documentFile), "utf8"));
}

/** Follows a local `$ref` such as `#/components/schemas/flowlog.logs.v1.Cost`. */
function deref(node: Json): Json {
  if (typeof node.$ref !== "string") return node;
  const path = (node.$ref as string).replace(/^#\//, "").split("/");
  return deref(path.reduce((target: Json, key) => target[key], document));
}

function schemaOf(typeName: string): Json {
  return document.components.schemas[typeName];
}

const listLogs = document.paths["/api/v1/logs"].get;

describe("the OpenAPI document (D2)", () => {
  it("the document is valid OpenAPI 3.1", async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("every annotated RPC has its REST path, and no other path is documented", () => {
    const routes = listHttpRoutes(apiServices);
    const documented = Object.entries(document.paths as Json).flatMap(([path, item]) =>
      Object.entries(item as Json).map(
        ([method, operation]) => `${method.toUpperCase()} ${path} ${operation.operationId}`,
      ),
    );
    const served = routes.map(
      (r) => `${r.httpMethod} ${r.pattern.openApiPath} ${r.method.parent.name}_${r.method.name}`,
    );
    expect(documented.sort()).toEqual([...served, "GET /api/v1/openapi.json OpenApi_GetDocument"].sort());
  });

  it("the document describes itself at GET /api/v1/openapi.json, open to callers without a key", () => {
    const operation = document.paths["/api/v1/openapi.json"].get;
    expect(operation.security).toEqual([]);
    expect(Object.keys(operation.responses["200"].content)).toEqual(["application/json"]);
  });

  it("components hold only what the REST paths reference (no reflection or google.rpc types)", () => {
    const reachable = new Set<string>();
    const visit = (node: unknown): void => {
      if (typeof node !== "object" || node === null) return;
      const ref = (node as Json).$ref;
      if (typeof ref === "string" && !reachable.has(ref)) {
        reachable.add(ref);
        visit(deref(node as Json));
      }
      for (const child of Object.values(node)) visit(child);
    };
    visit(document.paths);
    const schemas = Object.keys(document.components.schemas).map((name) => `#/components/schemas/${name}`);
    expect(schemas.filter((ref) => !reachable.has(ref))).toEqual([]);
  });
});

describe("GET /api/v1/logs", () => {
  /** The spec's query parameter table: JSON type, or a comma-separated list of strings. */
  const specParameters: [string, string][] = [
    ["workspaceId", "string"],
    ["workflowIds", "list"],
    ["folderIds", "list"],
    ["triggers", "list"],
    ["level", "string"],
    ["startDate", "string"],
    ["endDate", "string"],
    ["executionId", "string"],
    ["minDurationMs", "integer"],
    ["maxDurationMs", "integer"],
    ["minCost", "number"],
    ["maxCost", "number"],
    ["model", "string"],
    ["limit", "integer"],
    ["cursor", "string"],
    ["order", "string"],
    ["details", "string"],
    ["includeTraceSpans", "boolean"],
    ["includeFinalOutput", "boolean"],
    // D45's search, beyond the spec's list.
    ["q", "string"],
  ];

  it("takes exactly the spec's 19 query parameters and D45's q, with their names and types", () => {
    const parameters = listLogs.parameters as Json[];
    expect(parameters.every((p) => p.in === "query")).toBe(true);
    const described = parameters.map((p): [string, string] => {
      if (p.schema.type !== "array") return [p.name, p.schema.type];
      expect(p.schema.items.type).toBe("string");
      expect([p.style, p.explode]).toEqual(["form", false]);
      return [p.name, "list"];
    });
    expect(described).toEqual(specParameters);
  });

  // Issue 14: the buf.validate rules of the .proto, which the server enforces, are in the document, so a
  // client (and schemathesis's positive-data check) knows the valid values without trying them.
  it("states the values the spec allows: enums, the page-size range, non-negative costs, date forms", () => {
    const schemaOf = (name: string) => (listLogs.parameters as Json[]).find((p) => p.name === name)?.schema;
    expect(schemaOf("level").enum).toEqual(["info", "error"]);
    expect(schemaOf("order").enum).toEqual(["desc", "asc"]);
    expect(schemaOf("details").enum).toEqual(["basic", "full"]);
    expect(schemaOf("triggers").items.enum).toEqual(["api", "webhook", "schedule", "manual", "chat"]);
    expect(schemaOf("limit")).toMatchObject({ minimum: 1, maximum: 1000 });
    expect(schemaOf("minCost")).toMatchObject({ minimum: 0 });
    expect(schemaOf("maxCost")).toMatchObject({ minimum: 0 });
    expect(schemaOf("workspaceId")).toMatchObject({ minLength: 1 });
    expect(schemaOf("cursor")).toMatchObject({ minLength: 1 });
    for (const name of ["startDate", "endDate"]) {
      const pattern = new RegExp(schemaOf(name).pattern);
      for (const valid of ["2026-11-14", "2026-11-14T08:30:00Z", "2026-11-14T08:30:00.123+02:00"])
        expect(pattern.test(valid), `${name} ${valid}`).toBe(true);
      for (const invalid of ["yesterday", "2026-13-01", "2026-11-14 08:30", "2026-11-14T25:00:00Z"])
        expect(pattern.test(invalid), `${name} ${invalid}`).toBe(false);
    }
  });

  // The proto marks it with (google.api.field_behavior) = REQUIRED, which the generator reads.
  it("requires workspaceId and nothing else", () => {
    const required = (listLogs.parameters as Json[]).filter((p) => p.required).map((p) => p.name);
    expect(required).toEqual(["workspaceId"]);
  });

  it("answers data, nextCursor and limits, leaving nextCursor out on the last page (D7)", () => {
    const response = deref(listLogs.responses["200"].content["application/json"].schema);
    expect(Object.keys(response.properties)).toEqual(["data", "nextCursor", "limits"]);
    expect(response.required).toEqual(["data"]);
  });

  it("errors are problem+json with the rate-limit headers, and 429 adds Retry-After (D10, D11)", () => {
    const statuses = Object.keys(listLogs.responses);
    // A GET has no body to be too large: 413 is listed only where a request has one (D26).
    expect(statuses).toEqual(["200", "400", "401", "403", "404", "429", "500", "501", "default"]);
    for (const status of statuses.filter((s) => s !== "200")) {
      const response = deref(listLogs.responses[status]);
      expect(deref(response.content["application/problem+json"].schema)).toBe(schemaOf("Problem"));
    }
    expect(Object.keys(listLogs.responses["200"].headers)).toEqual([
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
      "X-RateLimit-Reset",
    ]);
    expect(Object.keys(deref(listLogs.responses[429]).headers)).toContain("Retry-After");
  });

  it("the path parameters of the other two endpoints are id and executionId", () => {
    const names = (path: string) => document.paths[path].get.parameters.map((p: Json) => [p.name, p.in]);
    expect(names("/api/v1/logs/{id}")).toEqual([["id", "path"]]);
    expect(names("/api/v1/logs/executions/{executionId}")).toEqual([["executionId", "path"]]);
  });
});

describe("GET /api/v1/logs:export (D45)", () => {
  const exportLogs = document.paths["/api/v1/logs:export"].get;

  it("answers a file: NDJSON lines that are log entries, or CSV, and says how a failed one ends", () => {
    const answer = exportLogs.responses["200"];
    expect(Object.keys(answer.content).sort()).toEqual(["application/x-ndjson", "text/csv"]);
    expect(answer.content["application/x-ndjson"]["x-ndjson-line"]).toEqual({
      $ref: "#/components/schemas/flowlog.logs.v1.LogEntry",
    });
    expect(answer.description).toContain("cut short");
  });

  it("takes the list's filters, its order, details, the include flags and format, and no cursor or limit", () => {
    const names = (exportLogs.parameters as Json[]).map((p) => p.name);
    const listNames = (listLogs.parameters as Json[]).map((p) => p.name);
    expect(names.toSorted()).toEqual(
      [...listNames.filter((n) => n !== "limit" && n !== "cursor"), "format"].toSorted(),
    );
    const format = (exportLogs.parameters as Json[]).find((p) => p.name === "format") as Json;
    expect(format.schema.enum).toEqual(["ndjson", "csv"]);
  });
});

describe("JSON shapes (D7)", () => {
  it("a log entry has the spec's list-form fields with their JSON types", () => {
    const entry = schemaOf("flowlog.logs.v1.LogEntry");
    const type = (name: string) => deref(entry.properties[name]).type;
    expect(Object.keys(entry.properties).slice(0, 10)).toEqual([
      "id",
      "workflowId",
      "executionId",
      "level",
      "trigger",
      "startedAt",
      "endedAt",
      "totalDurationMs",
      "cost",
      "files",
    ]);
    for (const name of ["id", "workflowId", "executionId", "level", "trigger"]) {
      expect(type(name)).toBe("string");
    }
    expect(entry.properties.startedAt).toEqual({ type: "string", format: "date-time" });
    expect(entry.properties.endedAt).toEqual({ type: "string", format: "date-time" });
    expect(type("totalDurationMs")).toBe("integer");
    expect(type("cost")).toBe("object");
    expect(deref(entry.properties.cost).properties.total.type).toBe("number");
    // files is a google.protobuf.Value: any JSON, null when there are none (D48).
    expect(entry.properties.files.$ref).toBe("#/components/schemas/google.protobuf.Value");
  });

  it("a google.protobuf.Value is any JSON value: a schema without a type, as generators take it (D48)", () => {
    expect(schemaOf("google.protobuf.Value")).toEqual({ description: "Any JSON value, null included." });
  });

  it("fields the server always writes are required; message and optional fields are not", () => {
    const entry = schemaOf("flowlog.logs.v1.LogEntry");
    expect(entry.required).toEqual([
      "id",
      "workflowId",
      "executionId",
      "level",
      "trigger",
      "startedAt",
      "endedAt",
      "totalDurationMs",
    ]);
    expect(schemaOf("flowlog.logs.v1.TraceSpan").required).not.toContain("error");
  });

  it("the rate-limit buckets are named sync and async, as the json_name options say", () => {
    expect(Object.keys(schemaOf("flowlog.logs.v1.ExecutionRateLimits").properties)).toEqual([
      "sync",
      "async",
    ]);
  });
});

describe("limits (D26, D28)", () => {
  it("a request with a body may be refused with 413, carrying the rate-limit headers", () => {
    const createWorkflow = document.paths["/api/v1/workspaces/{workspaceId}/workflows"].post;
    const tooLarge = deref(createWorkflow.responses["413"]);
    expect(tooLarge.description).toMatch(/1 MiB/);
    expect(Object.keys(tooLarge.headers)).toEqual([
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
      "X-RateLimit-Reset",
    ]);
  });

  it("an operator's 429 (failed authentications throttled) says when to retry, without a user's bucket", () => {
    const createUser = document.paths["/api/v1/admin/users"].post;
    expect(Object.keys(deref(createUser.responses["429"]).headers)).toEqual(["Retry-After"]);
    expect(deref(createUser.responses["401"]).headers).toBeUndefined();
  });
});

describe("security", () => {
  it("admin paths take the operator token, every other path the x-api-key header", () => {
    const { apiKey, operatorToken } = document.components.securitySchemes;
    expect(apiKey).toMatchObject({ type: "apiKey", in: "header", name: "x-api-key" });
    expect(operatorToken).toMatchObject({ type: "http", scheme: "bearer" });
    expect(document.security).toEqual([{ apiKey: [] }]);
    for (const [path, item] of Object.entries(document.paths as Json)) {
      for (const operation of Object.values(item as Json)) {
        if (path.startsWith("/api/v1/admin/")) expect(operation.security).toEqual([{ operatorToken: [] }]);
        else if (path !== "/api/v1/openapi.json") expect(operation.security).toBeUndefined();
      }
    }
  });
});

describe("regeneration", () => {
  const scratch = mkdtempSync(join(tmpdir(), "flowlog-openapi-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("changing a google.api.http path and regenerating changes the document", () => {
    for (const entry of ["proto", "buf.yaml"]) {
      cpSync(join(root, entry), join(scratch, entry), { recursive: true });
    }
    // buf.gen.yaml's OpenAPI step alone, as the repository's template declares it: the other plugins'
    // output is gen/'s own test (generated.test.ts), and their seconds of CPU tell nothing here.
    const template = readFileSync(join(root, "buf.gen.yaml"), "utf8");
    const openapiStep = template.match(
      /\n {2}- local: \[[^\]]*protoc-gen-openapi\.ts"\]\n(?: {4}.*\n)+/,
    )?.[0];
    expect(openapiStep, "buf.gen.yaml's protoc-gen-openapi step").toBeDefined();
    writeFileSync(
      join(scratch, "buf.gen.yaml"),
      `version: v2\ninputs:\n  - directory: proto\nplugins:${openapiStep}`,
    );
    // The plugin runs from src/ and reads buf's npm-provided protos and the fetched buf/validate, as in
    // the repository.
    for (const entry of ["node_modules", "src", ".tools"])
      symlinkSync(join(root, entry), join(scratch, entry));
    const proto = join(scratch, "proto/flowlog/logs/v1/logs_service.proto");
    const original = readFileSync(proto, "utf8");
    expect(original).toContain('{get: "/api/v1/logs"}');
    writeFileSync(proto, original.replace('{get: "/api/v1/logs"}', '{get: "/api/v1/log-entries"}'));

    runBufGenerate(scratch, join(scratch, "out"));

    const regenerated = readDocument(join(scratch, "out"));
    expect(regenerated.paths["/api/v1/log-entries"].get.operationId).toBe("LogsService_ListLogs");
    expect(regenerated.paths["/api/v1/logs"]).toBeUndefined();
    expect(regenerated.paths["/api/v1/logs/{id}"].get.operationId).toBe("LogsService_GetLog");
  });
});
