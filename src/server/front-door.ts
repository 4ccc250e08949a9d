import type { DescMethod } from "@bufbuild/protobuf";
import { ConnectError, type ContextValues, createContextKey, type Interceptor } from "@connectrpc/connect";
import { isFailedAuthentication } from "../errors/failed-authentication.js";
import { toPublicError } from "../errors/public-error.js";
import type { ApiRateLimiter, RateLimitOutcome } from "../limits/api-rate-limit.js";
import type {
  AuthenticationAttempt,
  FailedAuthenticationThrottle,
} from "../limits/failed-authentication-throttle.js";
import { callerKey } from "../services/caller.js";
import type { Authenticator } from "./authentication.js";

/**
 * The first two checks of D28, on every protocol, made from the request's headers before its body is read:
 * authenticate (401, no rate headers), then take the API token (429). Only then is the body read, decoded
 * and validated (400), and the service authorizes (403/404) and runs. So a stranger's request costs no
 * body read, no decompression and no parse, and every authenticated request, valid or not, takes a token
 * and is answered with the X-RateLimit-* headers.
 */
export interface FrontDoor {
  /** Admits the request (its caller and rate headers go into its context values) or returns the refusal. */
  admit(request: AdmissionRequest): Promise<ConnectError | undefined>;
  /**
   * Answers the refusal where the protocol reads no body (Connect GET), makes faults public (D10), and
   * counts the failed authentications that services find themselves (the inbound webhook's token).
   */
  readonly interceptor: Interceptor;
}

export interface AdmissionRequest {
  method: DescMethod;
  header: Headers;
  contextValues: ContextValues;
}

/** The remote address of the connection a request came on: what failed authentications are counted by. */
export const clientAddressKey = createContextKey<string>("unknown", { description: "client address" });
/** An RPC's name as gRPC spells its path, less the slash: `flowlog.logs.v1.LogsService/ListLogs`. */
export function procedureOf(method: { parent: { typeName: string }; name: string }): string {
  return `${method.parent.typeName}/${method.name}`;
}

/** What the request came in as (grpc, grpc-web, connect, rest), for the metrics' labels (issue 16). */
export const protocolKey = createContextKey<string>("other", { description: "protocol" });

/** The X-RateLimit-* headers of an admitted request's take (D11). */
const rateHeadersKey = createContextKey<Headers | undefined>(undefined, {
  description: "rate limit headers",
});

/** The front door's refusal, answered by the interceptor where the protocol reads no body (Connect GET). */
const refusalKey = createContextKey<ConnectError | undefined>(undefined, {
  description: "front door refusal",
});

export interface FrontDoorParts {
  authenticator: Authenticator;
  rateLimiter: ApiRateLimiter;
  failedAuthentications: FailedAuthenticationThrottle;
}

export function createFrontDoor({
  authenticator,
  rateLimiter,
  failedAuthentications,
}: FrontDoorParts): FrontDoor {
  async function check({
    method,
    header,
    contextValues,
  }: AdmissionRequest): Promise<ConnectError | undefined> {
    if (!authenticator.authenticates(method)) return undefined;
    const address = contextValues.get(clientAddressKey);
    // The inbound webhook's token is checked by its service, after the body: its attempt is taken around
    // that call (the interceptor), so a slow body holds none. Here it is only refused once none is left.
    if (authenticator.authenticatesItself(method)) return failedAuthentications.refusal(address);
    // D26: at most as many credentials of an address are looked at as it has failures left.
    const admission = failedAuthentications.attempt(address);
    // Awaited only when it waits: most requests take their attempt at once, a microtask sooner.
    const attempt = admission instanceof Promise ? await admission : admission;
    if (attempt instanceof ConnectError) return attempt;
    let caller: Awaited<ReturnType<Authenticator["authenticate"]>>;
    try {
      caller = await authenticator.authenticate(method, header);
    } catch (error) {
      const refusal = toPublicError(error, `authenticate ${procedureOf(method)}`);
      if (isFailedAuthentication(refusal)) attempt.failed();
      else attempt.ended();
      return refusal;
    }
    attempt.ended();
    if (!caller) return undefined;
    contextValues.set(callerKey, caller);
    let outcome: RateLimitOutcome;
    try {
      outcome = await rateLimiter(caller);
    } catch (error) {
      // The take could not be made (the state file locked past the busy timeout, PostgreSQL gone): the
      // request is refused as the fault it is (503 or 500, D10), answered in its protocol's form.
      return toPublicError(error, `rate limit ${procedureOf(method)}`);
    }
    contextValues.set(rateHeadersKey, outcome.headers);
    return outcome.refusal;
  }

  const interceptor: Interceptor = (next) => async (request) => {
    const refusal = request.contextValues.get(refusalKey);
    let attempt: AuthenticationAttempt | undefined;
    try {
      if (refusal) throw refusal;
      // A method that checks its caller's token itself (the inbound webhook) is one attempt (D26).
      if (authenticator.authenticatesItself(request.method)) {
        const admission = await failedAuthentications.attempt(request.contextValues.get(clientAddressKey));
        if (admission instanceof ConnectError) throw admission;
        attempt = admission;
      }
      return await next(request);
    } catch (error) {
      const publicError = toPublicError(error, procedureOf(request.method));
      // Such a method reports a wrong token as it finds it.
      if (!refusal && isFailedAuthentication(publicError)) {
        if (attempt) attempt.failed();
        else failedAuthentications.record(request.contextValues.get(clientAddressKey));
      }
      throw publicError;
    } finally {
      attempt?.ended();
    }
  };

  return {
    async admit(request) {
      const refusal = await check(request);
      if (refusal) request.contextValues.set(refusalKey, refusal);
      return refusal;
    },
    interceptor,
  };
}

/**
 * The admitted request's X-RateLimit-* headers (D11), for the answer's own headers: every answer after
 * admission carries them, whatever produced it (the service, an interceptor, the protocol's decoding).
 * They go on the answer once, at the edge: an error's metadata would repeat them in gRPC's trailers.
 */
export function rateHeadersOf(contextValues: ContextValues): Headers | undefined {
  return contextValues.get(rateHeadersKey);
}

/** A door that admits everyone without a caller: a server built with handlers only, as some tests use. */
export const openDoor: FrontDoor = {
  admit: async () => undefined,
  interceptor: (next) => async (request) => {
    try {
      return await next(request);
    } catch (error) {
      throw toPublicError(error, procedureOf(request.method));
    }
  },
};
