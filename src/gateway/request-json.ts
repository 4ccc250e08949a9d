import type { DescField, JsonObject, JsonValue } from "@bufbuild/protobuf";
import { ScalarType } from "@bufbuild/protobuf";
import type { FieldViolation } from "../errors/api-errors.js";
import { type HttpRoute, isStringValuedMessage } from "./http-rules.js";

/**
 * Turns the parts of a REST request into the proto3 JSON form of the RPC's request message.
 * Each path or query value is converted by the type of the field it fills; a value that does
 * not convert becomes a violation naming the parameter, and nothing reaches the service (D10).
 */
export interface RestRequestParts {
  /** Values captured by the route's path pattern, in the order of its variables. */
  pathValues: string[];
  query: URLSearchParams;
  /** The parsed JSON body, for routes that take one. */
  body: JsonValue | undefined;
}

export type RequestJsonResult = { ok: true; json: JsonObject } | { ok: false; violations: FieldViolation[] };

export function buildRequestJson(route: HttpRoute, parts: RestRequestParts): RequestJsonResult {
  const violations: FieldViolation[] = [];
  const json = bodyJson(route, parts.body);
  route.pattern.variables.forEach((variable, index) => {
    const raw = decodePathValue(parts.pathValues[index] ?? "");
    const field = variable.fieldPath[variable.fieldPath.length - 1] as DescField;
    const converted = convertScalar(field, raw);
    if (isViolation(converted)) violations.push({ field: variable.name, message: converted.violation });
    else setPath(json, variable.fieldPath, converted);
  });
  for (const field of route.queryFields) {
    const values = queryValues(parts.query, field);
    if (values === undefined) continue;
    const converted = convertQueryField(field, values);
    if ("violation" in converted) violations.push({ field: field.jsonName, message: converted.violation });
    else json[field.jsonName] = converted.value;
  }
  return violations.length > 0 ? { ok: false, violations } : { ok: true, json };
}

function bodyJson(route: HttpRoute, body: JsonValue | undefined): JsonObject {
  if (route.body === undefined || body === undefined) return {};
  if (route.body === "*") return isJsonObject(body) ? { ...body } : {};
  return { [route.body.jsonName]: body, ...patchMask(route, body) };
}

/**
 * A PATCH whose body is one field of a request with an `update_mask` changes exactly the keys the client
 * sent, as grpc-gateway does: so a client can set a list back to empty, which proto3 cannot tell from
 * leaving it out. A mask given in the query wins.
 */
function patchMask(route: HttpRoute, body: JsonValue): JsonObject {
  const mask = route.method.input.fields.find((f) => f.name === "update_mask");
  if (route.httpMethod !== "PATCH" || !mask || !isStringValuedMessage(mask) || !isJsonObject(body)) return {};
  return { [mask.jsonName]: Object.keys(body).join(",") };
}

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Query parameters are named by their JSON names; the proto names are accepted as well. */
function queryValues(query: URLSearchParams, field: DescField): string[] | undefined {
  const values = [
    ...query.getAll(field.jsonName),
    ...(field.jsonName !== field.name ? query.getAll(field.name) : []),
  ];
  return values.length > 0 ? values : undefined;
}

type Converted = { value: JsonValue } | { violation: string };

function convertQueryField(field: DescField, values: string[]): Converted {
  if (field.fieldKind === "list" && (field.listKind === "scalar" || field.listKind === "enum")) {
    // Lists are comma-separated where the spec says so (workflowIds, folderIds, triggers);
    // repeating the parameter works too.
    const items = values
      .flatMap((v) => v.split(","))
      .map((v) => v.trim())
      .filter((v) => v !== "");
    const converted: JsonValue[] = [];
    for (const item of items) {
      const result = convertScalar(field, item);
      if (isViolation(result)) return result;
      converted.push(result);
    }
    return { value: converted };
  }
  if (values.length > 1) return { violation: `${field.jsonName} must be given once` };
  // Its JSON form is a string; the request's decoding checks it and names the field if it is wrong.
  if (isStringValuedMessage(field)) return { value: values[0] as string };
  if (field.fieldKind !== "scalar" && field.fieldKind !== "enum") {
    return { violation: `${field.jsonName} cannot be set from the query string` };
  }
  const result = convertScalar(field, values[0] as string);
  return isViolation(result) ? result : { value: result };
}

function isViolation(value: JsonValue | { violation: string }): value is { violation: string } {
  return typeof value === "object" && value !== null && "violation" in value;
}

const int32Range: Partial<Record<ScalarType, [number, number]>> = {
  [ScalarType.INT32]: [-2147483648, 2147483647],
  [ScalarType.SINT32]: [-2147483648, 2147483647],
  [ScalarType.SFIXED32]: [-2147483648, 2147483647],
  [ScalarType.UINT32]: [0, 4294967295],
  [ScalarType.FIXED32]: [0, 4294967295],
};

/** Converts one text value to the JSON the field expects, or says why it cannot. */
function convertScalar(field: DescField, raw: string): JsonValue | { violation: string } {
  const name = field.jsonName;
  if (field.enum) {
    const value = field.enum.values.find((v) => v.name === raw || String(v.number) === raw);
    return value
      ? value.name
      : { violation: `${name} must be one of ${field.enum.values.map((v) => v.name).join(", ")}` };
  }
  const scalar = field.scalar ?? ScalarType.STRING;
  switch (scalar) {
    case ScalarType.STRING:
      return raw;
    case ScalarType.BOOL:
      // D9: true, false, 1, 0; anything else is refused rather than guessed.
      if (raw === "true" || raw === "1") return true;
      if (raw === "false" || raw === "0") return false;
      return { violation: `${name} must be true, false, 1 or 0` };
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT: {
      const value = raw.trim() === "" ? Number.NaN : Number(raw);
      return Number.isFinite(value) ? value : { violation: `${name} must be a number` };
    }
    case ScalarType.BYTES:
      return /^[A-Za-z0-9+/_-]*={0,2}$/.test(raw) ? raw : { violation: `${name} must be base64` };
    default:
      return convertInteger(scalar, name, raw);
  }
}

function convertInteger(scalar: ScalarType, name: string, raw: string): JsonValue | { violation: string } {
  const unsigned =
    scalar === ScalarType.UINT32 ||
    scalar === ScalarType.FIXED32 ||
    scalar === ScalarType.UINT64 ||
    scalar === ScalarType.FIXED64;
  if (!/^-?\d+$/.test(raw))
    return { violation: `${name} must be ${unsigned ? "a non-negative " : "an "}integer` };
  const range = int32Range[scalar];
  if (range) {
    const value = Number(raw);
    if (value < range[0] || value > range[1])
      return { violation: `${name} must be an integer from ${range[0]} to ${range[1]}` };
    return value;
  }
  // 64-bit integers travel as strings in proto3 JSON.
  const value = BigInt(raw);
  const [min, max] = unsigned ? [0n, 2n ** 64n - 1n] : [-(2n ** 63n), 2n ** 63n - 1n];
  if (value < min || value > max) return { violation: `${name} must be an integer from ${min} to ${max}` };
  return value.toString();
}

function decodePathValue(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

function setPath(json: JsonObject, fieldPath: DescField[], value: JsonValue): void {
  let target = json;
  for (const field of fieldPath.slice(0, -1)) {
    const next = target[field.jsonName];
    const child: JsonObject = isJsonObject(next) ? { ...next } : {};
    target[field.jsonName] = child;
    target = child;
  }
  target[(fieldPath[fieldPath.length - 1] as DescField).jsonName] = value;
}
