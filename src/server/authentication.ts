import type { DescMethod, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { AdminService } from "../../gen/flowlog/admin/v1/admin_service_pb.js";
import { hashApiKey } from "../services/accounts/api-keys.js";
import { checkOperatorToken } from "../services/accounts/operator-token.js";
import type { Caller } from "../services/caller.js";
import type { Store } from "../store/store.js";

export interface AuthenticationOptions {
  accounts: Store["accounts"];
  /** Services whose methods need a user's x-api-key (D5)... */
  userKeyServices: DescService[];
  /** ...except these, which authenticate the caller themselves (the inbound webhook's token, D15). */
  selfAuthenticatingMethods: DescMethod[];
  operatorToken: string | undefined;
  clock: () => number;
}

/** Who is calling, judged from the request's headers alone: the front door asks before any body is read. */
export interface Authenticator {
  /** Whether a caller of the method proves who it is: a user key, the operator token, or a token of its own. */
  authenticates(method: DescMethod): boolean;
  /** Whether the method's service checks the caller's credential itself (the inbound webhook's token). */
  authenticatesItself(method: DescMethod): boolean;
  /** The user behind the key, or undefined where the method has none; throws `unauthenticated`. */
  authenticate(method: DescMethod, header: Headers): Promise<Caller | undefined>;
}

/** last_used_at is a hint for humans; one write per key per minute keeps it off the hot path. */
const touchIntervalMs = 60_000;

/**
 * User-key services need `x-api-key` (HTTP header or gRPC metadata): none, unknown or revoked is
 * `unauthenticated` (D5, D10). The admin service needs the operator token instead. Reflection needs nothing.
 */
export function createAuthenticator(options: AuthenticationOptions): Authenticator {
  const guarded = new Set(options.userKeyServices.map((s) => s.typeName));
  const exempt = new Set(options.selfAuthenticatingMethods);
  const lastTouched = new Map<string, number>();
  const needsUserKey = (method: DescMethod) => guarded.has(method.parent.typeName) && !exempt.has(method);
  return {
    authenticates: (method) =>
      method.parent.typeName === AdminService.typeName || guarded.has(method.parent.typeName),
    authenticatesItself: (method) => exempt.has(method),
    async authenticate(method, header) {
      if (method.parent.typeName === AdminService.typeName) {
        checkOperatorToken(header.get("authorization"), options.operatorToken);
        return undefined;
      }
      if (!needsUserKey(method)) return undefined;
      const key = header.get("x-api-key");
      if (!key) throw new ConnectError("missing x-api-key header", Code.Unauthenticated);
      const owner = await options.accounts.ownerOfKeyHash(hashApiKey(key));
      if (!owner) throw new ConnectError("invalid or revoked API key", Code.Unauthenticated);
      const now = options.clock();
      if (now - (lastTouched.get(owner.keyId) ?? 0) >= touchIntervalMs) {
        lastTouched.set(owner.keyId, now);
        await options.accounts.touchApiKey(owner.keyId, now);
      }
      return owner;
    },
  };
}
