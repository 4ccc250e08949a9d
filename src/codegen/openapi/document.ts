import type { DescField, DescMessage, DescService } from "@bufbuild/protobuf";
import {
  type HttpRoute,
  isStringValuedMessage,
  listHttpRoutes,
  restStreamForm,
} from "../../gateway/http-rules.js";
import {
  type Caller,
  headerComponents,
  problemResponseRefs,
  problemSchema,
  responseComponents,
  responseHeaders,
} from "./errors.js";
import { commentOf, type JsonSchema, type SchemaCatalog, sortKeys } from "./json-schema.js";

/** D2: the document describes itself, so clients find it where the REST paths are. */
const OPENAPI_DOCUMENT_PATH = "/api/v1/openapi.json";

/** The admin paths are guarded by the operator token instead of a user's API key. */
const ADMIN_PATH_PREFIX = "/api/v1/admin/";

const API_KEY_SCHEME = "apiKey";
const OPERATOR_TOKEN_SCHEME = "operatorToken";

/** OpenAPI's own order of the operations of a path item. */
const METHOD_ORDER = ["get", "put", "post", "delete", "patch"] as const;

/**
 * The OpenAPI 3.1 document of the REST routes that the gateway serves for `services` (D2), or
 * `undefined` when they declare none. Keys come out in a fixed order so regeneration is byte-identical.
 */
export function buildOpenApiDocument(
  services: readonly DescService[],
  catalog: SchemaCatalog,
): JsonSchema | undefined {
  const routes = listHttpRoutes(services);
  if (routes.length === 0) return undefined;
  for (const route of routes) reachRoute(route, catalog);
  const paths = buildPaths(routes, catalog);
  return {
    openapi: "3.1.0",
    info: {
      title: "flowlog API",
      version: apiVersion(services),
      description: "The REST surface of flowlog, generated from its .proto files.",
    },
    servers: [{ url: "/" }],
    security: [{ [API_KEY_SCHEME]: [] }],
    tags: tags(routes),
    paths,
    components: {
      schemas: sortKeys({ ...catalog.components(), Problem: problemSchema() }),
      responses: responseComponents(new Set(routes.map(callerOf))),
      headers: headerComponents(),
      securitySchemes: securitySchemes(),
    },
  };
}

function apiVersion(services: readonly DescService[]): string {
  const versions = services.map((service) => service.file.proto.package.split(".").pop() ?? "");
  return [...new Set(versions)].sort().join(", ");
}

function tags(routes: readonly HttpRoute[]): JsonSchema[] {
  const services = new Map(routes.map((route) => [route.method.parent.name, route.method.parent]));
  return Object.values(sortKeys(Object.fromEntries(services))).map((service) => ({
    name: service.name,
    description: commentOf(service),
  }));
}

function securitySchemes(): JsonSchema {
  return {
    [API_KEY_SCHEME]: {
      type: "apiKey",
      in: "header",
      name: "x-api-key",
      description: "A user's API key (D5); it sees what that user may see.",
    },
    [OPERATOR_TOKEN_SCHEME]: {
      type: "http",
      scheme: "bearer",
      description: "The operator token guarding the admin paths; user API keys are refused there.",
    },
  };
}

function callerOf(route: HttpRoute): Caller {
  return route.pattern.openApiPath.startsWith(ADMIN_PATH_PREFIX) ? "operator" : "user";
}

function reachRoute(route: HttpRoute, catalog: SchemaCatalog): void {
  catalog.reach(isDownload(route) ? downloadedEntry(route.method.output) : route.method.output, "output");
  const body = requestBodyShape(route);
  if (body?.kind === "message") catalog.reach(body.message, "input");
  if (body?.kind === "field") catalog.reachFields([body.field], "input");
  if (body?.kind === "partial") catalog.reachFields(partialFields(body), "input");
}

function buildPaths(routes: readonly HttpRoute[], catalog: SchemaCatalog): JsonSchema {
  const items = new Map<string, Map<string, JsonSchema>>();
  for (const [route, operationId] of operationIds(routes)) {
    const item = items.get(route.pattern.openApiPath) ?? new Map<string, JsonSchema>();
    const method = route.httpMethod.toLowerCase();
    if (item.has(method)) throw new Error(`two RPCs are bound to ${route.httpMethod} ${route.template}`);
    item.set(method, operation(route, operationId, catalog));
    items.set(route.pattern.openApiPath, item);
  }
  items.set(OPENAPI_DOCUMENT_PATH, new Map([["get", documentOperation()]]));
  return sortKeys(Object.fromEntries([...items].map(([path, item]) => [path, orderedPathItem(item)])));
}

function orderedPathItem(item: Map<string, JsonSchema>): JsonSchema {
  return Object.fromEntries(METHOD_ORDER.filter((m) => item.has(m)).map((m) => [m, item.get(m)]));
}

/** `Service_Method`; an additional binding of the same RPC gets a numeric suffix. */
function operationIds(routes: readonly HttpRoute[]): [HttpRoute, string][] {
  const seen = new Map<string, number>();
  return routes.map((route) => {
    const base = `${route.method.parent.name}_${route.method.name}`;
    const count = (seen.get(base) ?? 0) + 1;
    seen.set(base, count);
    return [route, count === 1 ? base : `${base}_${count}`];
  });
}

function operation(route: HttpRoute, operationId: string, catalog: SchemaCatalog): JsonSchema {
  const caller = callerOf(route);
  const parameters = [
    ...pathParameters(route, catalog),
    ...queryParameters(route, catalog),
    ...resumeHeader(route),
  ];
  return {
    tags: [route.method.parent.name],
    operationId,
    description: commentOf(route.method),
    security: caller === "operator" ? [{ [OPERATOR_TOKEN_SCHEME]: [] }] : undefined,
    parameters: parameters.length > 0 ? parameters : undefined,
    requestBody: requestBody(route, catalog),
    responses: {
      200: {
        description: answerDescription(route),
        headers: responseHeaders(caller, 200),
        content: answerContent(route, catalog),
      },
      ...problemResponseRefs(caller, route.body !== undefined),
    },
  };
}

const eventStreamDescription =
  "Server-Sent Events (D44): each message of the stream is an event whose data is its JSON (the schema " +
  "here) and whose id resumes after it (send it back as Last-Event-ID); a comment line is a heartbeat; " +
  "an `error` event holding a problem ends the stream.";

const downloadDescription =
  "A file, streamed in a chunked body (D45), as Content-Disposition: attachment names it. " +
  "application/x-ndjson (format=ndjson): one entry per line, its JSON (the schema here). text/csv " +
  "(format=csv): a header row, then one row per entry, a column per top-level field of that JSON, nested " +
  "values as their JSON text. A transfer cut short (no final chunk) is an export that failed midway.";

function answerDescription(route: HttpRoute): string {
  if (route.method.methodKind !== "server_streaming") return "OK";
  return isDownload(route) ? downloadDescription : eventStreamDescription;
}

function isDownload(route: HttpRoute): boolean {
  return route.method.methodKind === "server_streaming" && restStreamForm(route.method) === "download";
}

/**
 * A unary answer is one JSON body; a server-streaming one is Server-Sent Events of its messages, or a
 * file of the entries its messages carry (http-rules.ts's restStreamForm).
 */
function answerContent(route: HttpRoute, catalog: SchemaCatalog): JsonSchema {
  const output = route.method.output;
  if (route.method.methodKind !== "server_streaming") {
    return { "application/json": { schema: catalog.messageRef(output, "output") } };
  }
  if (isDownload(route)) return downloadContent(output, catalog);
  // OpenAPI 3.1 has no schema for an event's data (3.2's itemSchema): an extension carries it.
  const data = catalog.messageRef(output, "output");
  return { "text/event-stream": { schema: { type: "string" }, "x-event-data": data } };
}

/** An export's file: each NDJSON line is one of the messages' `entries` (OpenAPI 3.1 has no item schema). */
function downloadContent(output: DescMessage, catalog: SchemaCatalog): JsonSchema {
  const line = catalog.messageRef(downloadedEntry(output), "output");
  return {
    "application/x-ndjson": { schema: { type: "string" }, "x-ndjson-line": line },
    "text/csv": { schema: { type: "string" } },
  };
}

/** What a downloaded file holds one of per line: the message of the stream's `entries`. */
function downloadedEntry(output: DescMessage): DescMessage {
  const entries = output.fields.find((field) => field.name === "entries");
  if (entries?.message === undefined) throw new Error(`${output.typeName} has no entries to download`);
  return entries.message;
}

/** Where a stream resumes: the id of the last event received (the browser's EventSource sends it). */
function resumeHeader(route: HttpRoute): JsonSchema[] {
  if (route.method.methodKind !== "server_streaming" || restStreamForm(route.method) === "download")
    return [];
  return [
    {
      name: "Last-Event-ID",
      in: "header",
      required: false,
      description: "The id of the last event received: the stream continues after it.",
      schema: { type: "string" },
    },
  ];
}

function pathParameters(route: HttpRoute, catalog: SchemaCatalog): JsonSchema[] {
  return route.pattern.variables.map((variable) => {
    const field = variable.fieldPath[variable.fieldPath.length - 1] as DescField;
    return parameter(variable.name, "path", true, field, catalog.valueSchema(field, "input"));
  });
}

/** Query parameters carry JSON names; a repeated field is one comma-separated value (D9). */
function queryParameters(route: HttpRoute, catalog: SchemaCatalog): JsonSchema[] {
  return route.queryFields.map((field) => {
    if (field.fieldKind === "map" || (field.message !== undefined && !isStringValuedMessage(field))) {
      throw new Error(
        `${route.method.input.typeName}.${field.name} cannot be a query parameter of ${route.template}: ` +
          "only scalar, enum and string-valued well-known fields can; bind it in the path or the body",
      );
    }
    const required = catalog.isRequiredInput(field);
    // A FieldMask, Timestamp or Duration travels in the query as its JSON string.
    const schema = isStringValuedMessage(field) ? { type: "string" } : catalog.valueSchema(field, "input");
    const list = field.fieldKind === "list" ? { style: "form", explode: false } : {};
    return { ...parameter(field.jsonName, "query", required, field, schema), ...list };
  });
}

function parameter(name: string, place: string, required: boolean, field: DescField, schema: JsonSchema) {
  return { name, in: place, required, description: commentOf(field), schema };
}

/**
 * `body: "*"` is the request message, less the top-level fields the path fills (those make an inline
 * schema, as the message's own would list them twice); `body: "field"` is that field.
 */
type BodyShape =
  | { kind: "message"; message: DescMessage }
  | { kind: "partial"; message: DescMessage; omit: ReadonlySet<DescField> }
  | { kind: "field"; field: DescField };

function requestBodyShape(route: HttpRoute): BodyShape | undefined {
  if (route.body === undefined) return undefined;
  if (route.body !== "*") return { kind: "field", field: route.body };
  const message = route.method.input;
  const omit = new Set(route.pattern.variables.flatMap((v) => (v.fieldPath.length === 1 ? v.fieldPath : [])));
  return omit.size === 0 ? { kind: "message", message } : { kind: "partial", message, omit };
}

function partialFields(shape: BodyShape & { kind: "partial" }): DescField[] {
  return shape.message.fields.filter((field) => !shape.omit.has(field));
}

function requestBody(route: HttpRoute, catalog: SchemaCatalog): JsonSchema | undefined {
  const shape = requestBodyShape(route);
  if (shape === undefined) return undefined;
  return { required: true, content: { "application/json": { schema: bodySchema(shape, catalog) } } };
}

function bodySchema(shape: BodyShape, catalog: SchemaCatalog): JsonSchema {
  switch (shape.kind) {
    case "message":
      return catalog.messageRef(shape.message, "input");
    case "partial":
      return catalog.objectSchema(shape.message, "input", shape.omit);
    case "field":
      return catalog.fieldSchema(shape.field, "input");
  }
}

function documentOperation(): JsonSchema {
  return {
    operationId: "OpenApi_GetDocument",
    description: "This document. It needs no API key.",
    security: [],
    responses: {
      200: {
        description: "The OpenAPI 3.1 document of the REST surface.",
        content: { "application/json": { schema: { type: "object", additionalProperties: true } } },
      },
    },
  };
}
