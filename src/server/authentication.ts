import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { AdminService } from "../../gen/flowlog/admin/v1/admin_service_pb.js";
import { hashApiKey } from "../services/accounts/api-keys.js";
import { checkOperatorToken } from "../services/accounts/operator-token.js";
import type { AccountsStore } from "../store/accounts-store.js";
import { callerKey } from "./caller.js";

export interface AuthenticationOptions {
  accounts: AccountsStore;
  /** Services whose methods need a user's x-api-key (D5)... */
  userKeyServices: DescService[];
  /** ...except these, which authenticate the caller themselves (the inbound webhook's token, D15). */
  selfAuthenticatingMethods: DescMethod[];
  operatorToken: string | undefined;
  clock: () => number;
}

/** last_used_at is a hint for humans; one write per key per minute keeps it off the hot path. */
const touchIntervalMs = 60_000;

/**
 * Who is calling (D5, D10). User-key services need `x-api-key` (HTTP header or gRPC metadata):
 * none, unknown or revoked is `unauthenticated`. The admin service needs the operator token
 * instead. Reflection needs nothing.
 */
export function createAuthentication(options: AuthenticationOptions): Interceptor {
  const guarded = new Set(options.userKeyServices.map((s) => s.typeName));
  const exempt = new Set(options.selfAuthenticatingMethods);
  const lastTouched = new Map<string, number>();
  return (next) => async (request) => {
    if (request.service.typeName === AdminService.typeName) {
      checkOperatorToken(request.header.get("authorization"), options.operatorToken);
      return next(request);
    }
    if (!guarded.has(request.service.typeName) || exempt.has(request.method)) return next(request);
    const key = request.header.get("x-api-key");
    if (!key) throw new ConnectError("missing x-api-key header", Code.Unauthenticated);
    const owner = options.accounts.ownerOfKeyHash(hashApiKey(key));
    if (!owner) throw new ConnectError("invalid or revoked API key", Code.Unauthenticated);
    const now = options.clock();
    if (now - (lastTouched.get(owner.keyId) ?? 0) >= touchIntervalMs) {
      lastTouched.set(owner.keyId, now);
      options.accounts.touchApiKey(owner.keyId, now);
    }
    request.contextValues.set(callerKey, owner);
    return next(request);
  };
}
