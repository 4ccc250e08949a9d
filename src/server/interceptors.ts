import type { Interceptor } from "@connectrpc/connect";
import { toPublicError } from "../errors/public-error.js";
import { requiredFields } from "./required-fields.js";

/**
 * The interceptor chain every protocol shares (REST enters through the same handlers), outermost
 * first. The guards (authentication, then the API rate limit, D11) run before the validation of
 * required fields: a caller without a key learns nothing about the request's shape.
 */
export function createInterceptors(guards: Interceptor[] = []): Interceptor[] {
  return [errorBoundary, ...guards, requiredFields];
}

/** Faults become `internal` with no internals in the message (D10); deliberate errors pass. */
const errorBoundary: Interceptor = (next) => async (request) => {
  try {
    return await next(request);
  } catch (error) {
    throw toPublicError(error, `${request.method.parent.typeName}/${request.method.name}`);
  }
};
