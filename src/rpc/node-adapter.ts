import { Code, ConnectError, type ContextValues } from "@connectrpc/connect";
import type { UniversalHandler } from "@connectrpc/connect/protocol";
import { logger } from "../logging/logger.js";
import { universalRequestOf, writeUniversalResponse } from "./node-exchange.js";
import { closeIfBodyUnread, type NodeRequest, type NodeResponse } from "./node-http.js";

export interface NodeListenerOptions {
  /** The router's handlers, each answering the path of its RPC (`/flowlog.logs.v1.LogsService/GetLog`). */
  handlers: readonly UniversalHandler[];
  /** Requests no RPC path names. */
  fallback(req: NodeRequest, res: NodeResponse): void;
  /** The values a call's context starts with, from its request. */
  contextValues(req: NodeRequest): ContextValues;
}

/**
 * A Node request listener for the RPC paths, as connect-node's `connectNodeAdapter` makes one, through
 * flowlog's exchange (node-exchange.ts) instead of connect-node's. Two more things than connect-node: an
 * answer given without reading the request's body closes an HTTP/1.1 connection (a refusal, D28), and a
 * fault past the handler's own error answers cuts the stream or connection, so the client learns of it at
 * once instead of waiting on an answer that will not come.
 */
export function createNodeListener(
  options: NodeListenerOptions,
): (req: NodeRequest, res: NodeResponse) => void {
  const paths = new Map(options.handlers.map((handler) => [handler.requestPath, handler]));
  return (req, res) => {
    const handler = paths.get(req.url?.split("?", 1)[0] ?? "");
    if (!handler) {
      options.fallback(req, res);
      return;
    }
    handler(universalRequestOf(req, res, options.contextValues(req)))
      .then((response) => {
        closeIfBodyUnread(req, res);
        return writeUniversalResponse(response, res);
      })
      .catch((reason) => {
        res.destroy();
        if (ConnectError.from(reason).code === Code.Aborted) return;
        logger.error({ err: reason, rpc: handler.requestPath }, "rpc handler failed");
      });
  };
}
