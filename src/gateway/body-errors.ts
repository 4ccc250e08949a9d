import { type DescMessage, fromJson, type JsonObject } from "@bufbuild/protobuf";
import { isFieldError } from "@bufbuild/protobuf/reflect";
import type { FieldViolation } from "../errors/api-errors.js";

/**
 * Checks a REST body against the request message before the handler decodes it, so a bad body is refused
 * naming the field, and without echoing the value: protobuf-es quotes the offending value in its message,
 * and a value sent to a secret's field (an environment variable, D24) must not come back in an error.
 */
export function bodyViolations(schema: DescMessage, json: JsonObject): FieldViolation[] {
  try {
    fromJson(schema, json);
    return [];
  } catch (error) {
    return [violationOf(error)];
  }
}

function violationOf(error: unknown): FieldViolation {
  const cause = error instanceof Error ? error.cause : undefined;
  if (isFieldError(cause)) {
    const field = cause.field();
    const name = field.kind === "field" ? field.jsonName : field.name;
    return { field: name, message: `${name} has a value of the wrong type or form` };
  }
  const unknownKey = error instanceof Error ? /key "([^"]+)" is unknown/.exec(error.message) : null;
  if (unknownKey)
    return { field: unknownKey[1] as string, message: `${unknownKey[1]} is not a field of this request` };
  return { field: "body", message: "body does not match the request" };
}
