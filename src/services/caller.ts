import { Code, ConnectError, type ContextValues, createContextKey } from "@connectrpc/connect";
import type { UserRecord } from "../store/records.js";

/** Who is calling: set by the authentication interceptor, read by rate limiting and the services. */
export interface Caller {
  keyId: string;
  user: UserRecord;
}

export const callerKey = createContextKey<Caller | undefined>(undefined, {
  description: "authenticated caller",
});

/** The caller of a request that passed authentication; services of user-key APIs call this. */
export function callerOf(contextValues: ContextValues): Caller {
  const caller = contextValues.get(callerKey);
  if (!caller) throw new ConnectError("missing or invalid x-api-key", Code.Unauthenticated);
  return caller;
}
