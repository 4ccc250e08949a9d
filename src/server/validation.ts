import type { DescField, DescMessage, DescMethod, Message } from "@bufbuild/protobuf";
import { getOption, hasOption, isFieldSet } from "@bufbuild/protobuf";
import {
  isReflectList,
  isReflectMessage,
  type Path,
  type ReflectMessage,
  reflect,
} from "@bufbuild/protobuf/reflect";
import { createValidator, type Violation } from "@bufbuild/protovalidate";
import type { Interceptor } from "@connectrpc/connect";
import { FieldRulesSchema, field as fieldRules } from "../../gen/buf/validate/validate_pb.js";
import { http } from "../../gen/google/api/annotations_pb.js";
import { FieldBehavior, field_behavior } from "../../gen/google/api/field_behavior_pb.js";
import { type FieldViolation, invalidArgument } from "../errors/api-errors.js";

/**
 * Validation declared in the .proto files (issue 14), one interceptor for every protocol (REST enters
 * through the same handlers): a field marked `(google.api.field_behavior) = REQUIRED` must be set, and
 * the `buf.validate` rules (protovalidate) must hold. Every violation is reported at once, in D10's
 * shape: the field by its JSON path (`triggers[1]`, `email.recipients[2]`), relative to the message a
 * REST path takes as its body (`webhook.url`, not `subscription.webhook.url`), and a sentence naming it.
 * The OpenAPI document is generated from the same rules. Rules that need the database or the
 * configuration (a workflow that exists, D26's list lengths) stay in the services.
 */
export const validation: Interceptor = (next) => async (request) => {
  if (request.stream) {
    // connect-es hands a server-streaming call its one request as a stream too (D44's TailLogs).
    if (request.method.methodKind !== "server_streaming") return next(request);
    return next({ ...request, message: validated(request.method, request.message) });
  }
  const violations = violationsOf(request.method, request.message);
  if (violations.length > 0) throw invalidArgument(violations);
  return next(request);
};

/** The request messages, each refused as it is read when it breaks the .proto's rules. */
async function* validated<M extends Message>(
  method: DescMethod,
  messages: AsyncIterable<M>,
): AsyncIterable<M> {
  for await (const message of messages) {
    const violations = violationsOf(method, message);
    if (violations.length > 0) throw invalidArgument(violations);
    yield message;
  }
}

const validator = createValidator();

export function violationsOf(method: DescMethod, message: Message): FieldViolation[] {
  const result = validator.validate(method.input, message);
  if (result.kind === "error") throw result.error;
  const declared = result.kind === "invalid" ? result.violations : [];
  const relativeTo = bodyFieldOf(method);
  return [
    ...missingFields(method.input, message),
    ...declared.map((violation) => describe(violation, relativeTo)),
    ...nulCharacters(method.input, message, "").map((field) => {
      const name =
        relativeTo && field.startsWith(`${relativeTo}.`) ? field.slice(relativeTo.length + 1) : field;
      return { field: name, message: `${name} must not contain the NUL character (U+0000)` };
    }),
  ];
}

/** Messages written into the store as JSON text, where a NUL is escaped (\u0000) and harmless. */
const storedAsJson = new Set([
  "google.protobuf.Struct",
  "google.protobuf.Value",
  "google.protobuf.ListValue",
]);

/**
 * The JSON paths of the text fields that hold U+0000. Text is stored as it is (names, addresses, cron,
 * URLs), and PostgreSQL's text cannot hold a NUL (D32): one store must not accept what the other would
 * answer with a fault, so neither does.
 */
function nulCharacters(schema: DescMessage, message: Message, prefix: string): string[] {
  if (storedAsJson.has(schema.typeName)) return [];
  const found: string[] = [];
  const values = message as unknown as Record<string, unknown>;
  for (const field of schema.fields) {
    let value: unknown = values[field.localName];
    if (field.oneof) {
      const chosen = values[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
      value = chosen?.case === field.localName ? chosen.value : undefined;
    }
    if (value === undefined || value === null) continue;
    const path = `${prefix}${field.jsonName}`;
    if (field.fieldKind === "scalar" && hasNul(value)) found.push(path);
    else if (field.fieldKind === "message")
      found.push(...nulCharacters(field.message, value as Message, `${path}.`));
    else if (field.fieldKind === "list") {
      (value as unknown[]).forEach((item, index) => {
        if (field.listKind === "scalar" && hasNul(item)) found.push(`${path}[${index}]`);
        if (field.listKind === "message")
          found.push(...nulCharacters(field.message, item as Message, `${path}[${index}].`));
      });
    } else if (field.fieldKind === "map") {
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        if (hasNul(key) || (field.mapKind === "scalar" && hasNul(item)))
          found.push(`${path}.${key.replaceAll("\0", "\\u0000")}`);
        else if (field.mapKind === "message")
          found.push(...nulCharacters(field.message, item as Message, `${path}.${key}.`));
      }
    }
  }
  return found;
}

/** A module function, not a closure made on each call (src/rpc/unary-context.ts says what those cost). */
function hasNul(value: unknown): boolean {
  return typeof value === "string" && value.includes("\0");
}

const bodyFieldByMethod = new Map<DescMethod, string | undefined>();

/**
 * The request field a REST path takes as its whole body (`body: "subscription"`), if any. Read from the
 * method's options once: reading an extension decodes it each time, a few percent of a small request.
 */
function bodyFieldOf(method: DescMethod): string | undefined {
  if (bodyFieldByMethod.has(method)) return bodyFieldByMethod.get(method);
  const body = hasOption(method, http) ? getOption(method, http).body : "";
  const field = body === "" || body === "*" ? undefined : body;
  bodyFieldByMethod.set(method, field);
  return field;
}

const requiredByMessage = new Map<DescMessage, DescField[]>();

function requiredOf(schema: DescMessage): DescField[] {
  let required = requiredByMessage.get(schema);
  if (!required) {
    required = schema.fields.filter(
      (f) => hasOption(f, field_behavior) && getOption(f, field_behavior).includes(FieldBehavior.REQUIRED),
    );
    requiredByMessage.set(schema, required);
  }
  return required;
}

/** D10: a missing workspaceId is 400 on REST, invalid_argument on gRPC and Connect. */
function missingFields(schema: DescMessage, message: Message, prefix = ""): FieldViolation[] {
  const violations: FieldViolation[] = [];
  for (const field of requiredOf(schema)) {
    if (!isFieldSet(message, field)) {
      violations.push({ field: prefix + field.jsonName, message: `${prefix + field.jsonName} is required` });
    }
  }
  for (const field of schema.fields) {
    if (field.fieldKind !== "message" || !isFieldSet(message, field)) continue;
    const child = (message as unknown as Record<string, Message>)[field.localName] as Message;
    violations.push(...missingFields(field.message, child, `${prefix}${field.jsonName}.`));
  }
  return violations;
}

function describe(violation: Violation, relativeTo: string | undefined): FieldViolation {
  const field = jsonPath(violation.field, relativeTo);
  return { field, message: `${field} ${wordingOf(violation)}` };
}

/** `email.recipients[2]`, `state.blocks.api1`: JSON names, list indexes in brackets, map keys as names. */
function jsonPath(path: Path, relativeTo: string | undefined): string {
  let text = "";
  path.forEach((item, index) => {
    if (item.kind === "field") {
      if (index === 0 && item.name === relativeTo && path.length > 1) return;
      text += text === "" ? item.jsonName : `.${item.jsonName}`;
    } else if (item.kind === "list_sub") text += `[${item.index}]`;
    else if (item.kind === "map_sub") text += text === "" ? String(item.key) : `.${String(item.key)}`;
  });
  return text;
}

/**
 * The sentence after the field's name. protovalidate's own ("must be greater than or equal to 1 and less
 * than or equal to 1000") except where D10 has a plainer one for the rules our protos use.
 */
function wordingOf(violation: Violation): string {
  const [type = "", rule] = violation.ruleId.split(".");
  const value = ruleValueReader(violation);
  const allowed = value("in");
  if (rule === "in" && Array.isArray(allowed)) return `must be ${alternatives(allowed.map(String))}`;
  if (rule === "gte_lte" && integerTypes.has(type))
    return `must be an integer from ${value("gte")} to ${value("lte")}`;
  if (rule === "gte" && (type === "double" || type === "float"))
    return `must be a number of at least ${value("gte")}`;
  if (rule === "finite") return "must be a finite number";
  const examples = value("example");
  if (rule === "pattern" && Array.isArray(examples) && examples.length > 0)
    return `must be written like ${examples.join(" or ")}`;
  if (violation.ruleId === "required") return "is required";
  return violation.message;
}

const integerTypes = new Set(["int32", "int64", "uint32", "uint64", "sint32", "sint64"]);

function alternatives(values: string[]): string {
  return values.length === 2 ? values.join(" or ") : `one of ${values.join(", ")}`;
}

/**
 * The values of the rules message the violated rule sits in (e.g. the field's `Int32Rules`, for `gte` and
 * `lte`), by rule name: the rule path starts at the field's `FieldRules` and ends at the violated rule.
 */
function ruleValueReader(violation: Violation): (name: string) => unknown {
  const target = violation.field.findLast((item) => item.kind === "field");
  if (target?.kind !== "field" || !hasOption(target, fieldRules)) return () => undefined;
  let rules: ReflectMessage | undefined = reflect(FieldRulesSchema, getOption(target, fieldRules));
  for (const item of violation.rule.slice(0, -1)) {
    const next: unknown = item.kind === "field" ? rules?.get(item) : undefined;
    rules = isReflectMessage(next) ? next : undefined;
  }
  return (name) => {
    const field = rules?.fields.find((f) => f.name === name);
    const value = field && rules?.isSet(field) ? rules.get(field) : undefined;
    return isReflectList(value) ? [...value] : value;
  };
}
