import type { DescField, DescMessage, DescMethod, DescService } from "@bufbuild/protobuf";
import { getOption, hasOption } from "@bufbuild/protobuf";
import { http } from "../../gen/google/api/annotations_pb.js";
import type { HttpRule } from "../../gen/google/api/http_pb.js";

/**
 * The REST surface as the `google.api.http` annotations declare it (D2). Both the runtime
 * gateway and the OpenAPI generator read routes from here, so a path changed in a .proto
 * changes the served route and the document together.
 */
export interface HttpRoute {
  method: DescMethod;
  httpMethod: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The template as written, e.g. `/api/v1/logs/{execution_id}`. */
  template: string;
  pattern: PathPattern;
  /** `undefined`: no body; `"*"`: the whole request message; else the top-level field it fills. */
  body: DescField | "*" | undefined;
  /** Request fields that come from neither the path nor the body: the query parameters. */
  queryFields: DescField[];
}

export interface PathVariable {
  /** The request field the variable fills, as a path of fields from the request message. */
  fieldPath: DescField[];
  /** The variable as the OpenAPI document names it: the JSON names joined by dots. */
  name: string;
}

export interface PathPattern {
  regexp: RegExp;
  /** The template's literal start, up to its first variable or wildcard: no other path can match. */
  literalPrefix: string;
  /** In the order of the regexp's capture groups. */
  variables: PathVariable[];
  /** The path in OpenAPI form: `/api/v1/logs/{id}`. */
  openApiPath: string;
  /** Higher wins when several templates match one path: a custom verb, then more literal segments. */
  precedence: number;
}

export interface RouteMatch {
  route: HttpRoute;
  /** Captured path values, in the order of the route's variables. */
  pathValues: string[];
}

/** The routes whose template matches the path, the most specific first. */
export function matchRoutes(routes: HttpRoute[], path: string): RouteMatch[] {
  const matches: RouteMatch[] = [];
  for (const route of routes) {
    // Most routes are ruled out by their literal start, without running their regexp (issue 13).
    if (!path.startsWith(route.pattern.literalPrefix)) continue;
    const captured = route.pattern.regexp.exec(path);
    if (captured) matches.push({ route, pathValues: captured.slice(1) });
  }
  return matches.sort((a, b) => b.route.pattern.precedence - a.route.pattern.precedence);
}

/**
 * How REST answers a server-streaming RPC: Server-Sent Events of its messages (D44's tail), or a file
 * its messages' entries are written into (D45's export, in the format its request names). The gateway
 * and the OpenAPI document both read it here.
 */
export function restStreamForm(method: DescMethod): "event-stream" | "download" {
  return method.parent.typeName === "flowlog.logs.v1.LogsService" && method.name === "ExportLogs"
    ? "download"
    : "event-stream";
}

export class HttpRuleError extends Error {
  constructor(method: DescMethod, message: string) {
    super(`${method.parent.typeName}.${method.name}: ${message}`);
    this.name = "HttpRuleError";
  }
}

export function listHttpRoutes(services: Iterable<DescService>): HttpRoute[] {
  const routes: HttpRoute[] = [];
  for (const service of services) {
    for (const method of service.methods) {
      if (!hasOption(method, http)) continue;
      const rule = getOption(method, http);
      for (const binding of [rule, ...rule.additionalBindings]) {
        routes.push(toRoute(method, binding.pattern, binding.body));
      }
    }
  }
  return routes;
}

function toRoute(method: DescMethod, pattern: HttpRule["pattern"], bodySelector: string): HttpRoute {
  if (method.methodKind !== "unary" && method.methodKind !== "server_streaming") {
    throw new HttpRuleError(
      method,
      "only unary and server-streaming methods can have a google.api.http rule",
    );
  }
  if (pattern.case === undefined || pattern.case === "custom") {
    throw new HttpRuleError(method, "the rule needs one of get, post, put, patch or delete");
  }
  // A server-streaming method is answered as Server-Sent Events (D44), which a browser's EventSource
  // opens with a GET.
  if (method.methodKind === "server_streaming" && pattern.case !== "get") {
    throw new HttpRuleError(method, "a server-streaming method is bound to a get (Server-Sent Events)");
  }
  const httpMethod = pattern.case.toUpperCase() as HttpRoute["httpMethod"];
  const template = pattern.value;
  const parsed = parsePathTemplate(method, template);
  const body = resolveBody(method, bodySelector);
  const bound = new Set(parsed.variables.map((v) => v.fieldPath[0]));
  const queryFields =
    body === "*" ? [] : method.input.fields.filter((field) => !bound.has(field) && field !== body);
  return { method, httpMethod, template, pattern: parsed, body, queryFields };
}

function resolveBody(method: DescMethod, selector: string): HttpRoute["body"] {
  if (selector === "") return undefined;
  if (selector === "*") return "*";
  const field = method.input.fields.find((f) => f.name === selector);
  if (!field) throw new HttpRuleError(method, `body field "${selector}" is not in ${method.input.typeName}`);
  return field;
}

/**
 * Parses the path template grammar of google/api/http.proto:
 * `"/" Segment {"/" Segment} [":" Verb]`, where a segment is a literal, `*`, `**` or a
 * `{field.path=segments}` variable (`{field}` meaning `{field=*}`).
 */
export function parsePathTemplate(method: DescMethod, template: string): PathPattern {
  if (!template.startsWith("/")) throw new HttpRuleError(method, `path "${template}" must start with /`);
  const variables: PathVariable[] = [];
  let regexp = "";
  let openApiPath = "";
  let literalSegments = 0;
  let literalPrefix: string | undefined;
  const { segments, verb } = splitVerb(template.slice(1));
  for (const segment of splitSegments(method, segments)) {
    const variable = /^\{([A-Za-z_][\w.]*)(?:=(.+))?\}$/.exec(segment);
    if (literalPrefix === undefined && (variable || segment === "*" || segment === "**")) {
      literalPrefix = `${openApiPath}/`;
    }
    if (variable) {
      const fieldPath = resolveFieldPath(method, method.input, variable[1] as string);
      const name = fieldPath.map((f) => f.jsonName).join(".");
      variables.push({ fieldPath, name });
      regexp += `/(${segmentsRegexp(method, variable[2] ?? "*")})`;
      openApiPath += `/{${name}}`;
    } else {
      regexp += `/${segmentsRegexp(method, segment)}`;
      openApiPath += `/${segment}`;
      if (segment !== "*" && segment !== "**") literalSegments++;
    }
  }
  if (verb !== undefined) {
    regexp += `:${escapeRegExp(verb)}`;
    openApiPath += `:${verb}`;
  }
  const precedence = (verb === undefined ? 0 : 1000) + literalSegments;
  return {
    regexp: new RegExp(`^${regexp}$`),
    literalPrefix: literalPrefix ?? openApiPath,
    variables,
    openApiPath,
    precedence,
  };
}

function splitVerb(path: string): { segments: string; verb: string | undefined } {
  // A verb follows the last segment, outside any variable.
  const lastSlash = path.lastIndexOf("/");
  const colon = path.indexOf(":", lastSlash);
  if (colon < 0 || path.lastIndexOf("}") > colon) return { segments: path, verb: undefined };
  return { segments: path.slice(0, colon), verb: path.slice(colon + 1) };
}

function splitSegments(method: DescMethod, path: string): string[] {
  const segments: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of path) {
    if (char === "{") depth++;
    if (char === "}") depth--;
    if (char === "/" && depth === 0) {
      segments.push(current);
      current = "";
    } else {
      current += char;
    }
  }
  segments.push(current);
  if (depth !== 0 || segments.some((s) => s === "")) {
    throw new HttpRuleError(method, `malformed path template "/${path}"`);
  }
  return segments;
}

function segmentsRegexp(method: DescMethod, segments: string): string {
  return segments
    .split("/")
    .map((segment) => {
      if (segment === "*") return "[^/]+";
      if (segment === "**") return ".+";
      if (/^[\w.~%-]+$/.test(segment)) return escapeRegExp(segment);
      throw new HttpRuleError(method, `unsupported path segment "${segment}"`);
    })
    .join("/");
}

function resolveFieldPath(method: DescMethod, message: DescMessage, path: string): DescField[] {
  const fields: DescField[] = [];
  let current: DescMessage | undefined = message;
  for (const name of path.split(".")) {
    const field: DescField | undefined = current?.fields.find((f) => f.name === name);
    if (!field)
      throw new HttpRuleError(method, `path variable "${path}" names no field of ${message.typeName}`);
    fields.push(field);
    current = field.fieldKind === "message" ? field.message : undefined;
  }
  const last = fields[fields.length - 1] as DescField;
  if (last.fieldKind !== "scalar" && last.fieldKind !== "enum") {
    throw new HttpRuleError(method, `path variable "${path}" must be a scalar or enum field`);
  }
  return fields;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Well-known types whose proto3 JSON form is a string, so a query parameter can carry them. */
const stringValuedMessages = new Set([
  "google.protobuf.FieldMask",
  "google.protobuf.Timestamp",
  "google.protobuf.Duration",
]);

export function isStringValuedMessage(field: DescField): boolean {
  return field.fieldKind === "message" && stringValuedMessages.has(field.message.typeName);
}
