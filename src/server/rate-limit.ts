import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { toPublicError } from "../errors/public-error.js";
import type { PlanTable } from "../services/accounts/plans.js";
import { type ApiRateLimit, takeApiToken } from "../services/limits/api-rate-limit.js";
import type { Store } from "../store/store.js";
import { isoFromMs } from "../util/time.js";
import { callerKey } from "./caller.js";

/**
 * The API rate limit (D11), placed after authentication: every authenticated request takes one token
 * from its user's bucket, and every answer after that point, errors included, reports the bucket in
 * X-RateLimit-* headers. Errors carry them as metadata: the Connect protocol and the REST gateway turn
 * that into HTTP headers, gRPC and gRPC-Web into trailers. Requests without a caller pass untouched;
 * authentication has already refused the ones that needed one.
 */
export function createRateLimitInterceptor(
  store: Store,
  planLimits: PlanTable,
  clock: () => number = Date.now,
): Interceptor {
  return (next) => async (request) => {
    const caller = request.contextValues.get(callerKey);
    if (!caller) return next(request);
    const limit = takeApiToken(store, planLimits, caller.user, clock());
    const headers = rateLimitHeaders(limit);
    if (!limit.allowed) throw refusal(limit, headers);
    try {
      const response = await next(request);
      setAll(response.header, headers);
      return response;
    } catch (error) {
      // A fault becomes its public form here rather than in the error boundary, so it keeps the headers.
      const publicError = toPublicError(error, `${request.service.typeName}/${request.method.name}`);
      setAll(publicError.metadata, headers);
      throw publicError;
    }
  };
}

function rateLimitHeaders(limit: ApiRateLimit): Headers {
  return new Headers({
    "X-RateLimit-Limit": String(limit.requestsPerMinute),
    "X-RateLimit-Remaining": String(limit.remaining),
    "X-RateLimit-Reset": isoFromMs(limit.resetAtMs),
  });
}

function refusal(limit: ApiRateLimit, headers: Headers): ConnectError {
  const metadata = new Headers(headers);
  metadata.set("Retry-After", String(limit.retryAfterSeconds));
  return new ConnectError(
    `rate limit exceeded: ${limit.requestsPerMinute} requests per minute; retry after ${limit.retryAfterSeconds} s`,
    Code.ResourceExhausted,
    metadata,
  );
}

function setAll(target: Headers, source: Headers): void {
  for (const [name, value] of source) target.set(name, value);
}
