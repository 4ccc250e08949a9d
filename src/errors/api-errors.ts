import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";

/**
 * Errors are values created where the fact is known (style.md); every protocol carries the
 * same code, and the REST gateway turns them into problem+json once (D10).
 */
export interface FieldViolation {
  /** The field as the client wrote it: the JSON / query parameter name. */
  field: string;
  message: string;
}

/**
 * invalid_argument with one google.rpc.BadRequest detail, so gRPC clients in any language
 * read the same field violations that REST clients get in `errors`.
 */
export function invalidArgument(violations: FieldViolation[]): ConnectError {
  const detail = create(BadRequestSchema, {
    fieldViolations: violations.map(({ field, message }) => ({ field, description: message })),
  });
  const summary = violations.map((v) => v.message).join("; ");
  return new ConnectError(summary, Code.InvalidArgument, undefined, [
    { desc: BadRequestSchema, value: detail },
  ]);
}

export function fieldViolations(error: ConnectError): FieldViolation[] {
  return error
    .findDetails(BadRequestSchema)
    .flatMap((detail) => detail.fieldViolations.map((v) => ({ field: v.field, message: v.description })));
}
