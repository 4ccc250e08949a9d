import type { DescField, DescMessage, Message } from "@bufbuild/protobuf";
import { getOption, hasOption, isFieldSet } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { FieldBehavior, field_behavior } from "../../gen/google/api/field_behavior_pb.js";
import { type FieldViolation, invalidArgument } from "../errors/api-errors.js";

/**
 * Refuses a request that leaves out a field its .proto marks `(google.api.field_behavior) = REQUIRED`,
 * naming the field by its JSON name (D10: a missing workspaceId is 400 on REST, invalid_argument on
 * gRPC and Connect). The rule lives in the .proto, so every protocol and the OpenAPI document agree.
 */
export const requiredFields: Interceptor = (next) => async (request) => {
  if (request.stream) return next(request);
  const violations = missingFields(request.method.input, request.message);
  if (violations.length > 0) throw invalidArgument(violations);
  return next(request);
};

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
