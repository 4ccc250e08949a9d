import { Code, ConnectError } from "@connectrpc/connect";
import type { ClientAddress, NodeRequest } from "../rpc/node-http.js";
import { isOperatorToken } from "../services/accounts/operator-token.js";

/** What the API port serves to operators only (D46): readiness runs store and Temporal calls, metrics tell volumes. */
const operatorPaths = new Set(["/readyz", "/metrics"]);

/**
 * D46: on the public port, `/readyz` and `/metrics` answer the operator token (`Authorization: Bearer`)
 * or a trusted proxy asking for itself (its own address is the client's, FLOWLOG_TRUSTED_PROXIES); a
 * stranger's request forwarded by that proxy names the stranger in X-Forwarded-For and is refused. The
 * probe port (FLOWLOG_PROBE_PORT, loopback by default) answers them to anyone who can reach it.
 * Returns the refusal for a request that may not see the path, else undefined.
 */
export function operatorSurfaceGuard(options: {
  operatorToken: string | undefined;
  clientAddress: ClientAddress;
  isTrustedProxy: (address: string) => boolean;
}) {
  return (req: NodeRequest, path: string): ConnectError | undefined => {
    if (!operatorPaths.has(path)) return undefined;
    if (isOperatorToken(req.headers.authorization, options.operatorToken)) return undefined;
    if (options.isTrustedProxy(options.clientAddress(req))) return undefined;
    return new ConnectError(
      `${path} on the API port answers the operator token (Authorization: Bearer) or a trusted proxy; ` +
        "the probe port (FLOWLOG_PROBE_PORT) answers it to anyone who can reach it",
      Code.Unauthenticated,
    );
  };
}
