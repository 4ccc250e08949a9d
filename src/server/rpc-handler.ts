import { Code, ConnectError, type ConnectRouter, createContextValues } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { logger } from "../logging/logger.js";
import { protocolOf } from "../logging/metrics.js";
import { answerSerialization } from "../rpc/answer-serialization.js";
import type { JsonCall } from "../rpc/json-unary.js";
import { universalRequestOf, writeUniversalResponse } from "../rpc/node-exchange.js";
import {
  type ClientAddress,
  closeIfBodyUnread,
  type NodeRequest,
  type NodeResponse,
} from "../rpc/node-http.js";
import { behindGate, type RequestGate } from "../rpc/request-gate.js";
import { createRouter } from "../rpc/router.js";
import { clientAddressOf, type TrustedProxies } from "../security/trusted-proxies.js";
import { clientAddressKey, type FrontDoor, protocolKey, rateHeadersOf } from "./front-door.js";
import { createInterceptors } from "./interceptors.js";

export interface RpcHandlerOptions {
  routes(router: ConnectRouter): void;
  frontDoor: FrontDoor;
  /** The largest request message accepted, counted after decompression (D26, D29). */
  readMaxBytes: number;
  /**
   * D29: answers smaller than this go uncompressed even to a client that accepts gzip (every gRPC client
   * advertises it; compressing a 2 KB entry cost more than it saved).
   */
  compressMinBytes: number;
  /** Requests the RPC paths do not name. */
  fallback(req: NodeRequest, res: NodeResponse): void;
  /** The client's address, for D26's per-address throttle: the peer's, unless it is a trusted proxy. */
  clientAddress: ClientAddress;
}

export interface RpcHandler {
  /** The Node request listener of the RPC paths (gRPC, gRPC-Web, Connect); other paths go to the fallback. */
  listener(req: NodeRequest, res: NodeResponse): void;
  /**
   * Each unary RPC as an in-process JSON call by request path, without the front door, for a caller that
   * admits requests itself (the REST gateway).
   */
  jsonCalls: ReadonlyMap<string, JsonCall>;
}

/**
 * What connect-node's adapter does, with each handler put behind the front door: the request is admitted
 * from its headers before the handler reads its body (D28). Compressed requests are accepted (gzip, br)
 * within `readMaxBytes`, which Connect checks on the decompressed size.
 */
export function createRpcHandler(options: RpcHandlerOptions): RpcHandler {
  const router = createRouter({
    interceptors: createInterceptors(options.frontDoor),
    ...answerSerialization,
    acceptCompression: [compressionGzip, compressionBrotli],
    readMaxBytes: options.readMaxBytes,
    compressMinBytes: options.compressMinBytes,
  });
  options.routes(router);
  const gate: RequestGate = {
    admit: (request) => options.frontDoor.admit(request),
    answerHeaders: rateHeadersOf,
  };
  const paths = new Map(router.handlers.map((h) => [h.requestPath, behindGate(h, gate)]));

  return {
    jsonCalls: router.jsonCalls,
    listener(req, res) {
      const handler = paths.get(req.url?.split("?", 1)[0] ?? "");
      if (!handler) {
        options.fallback(req, res);
        return;
      }
      const contextValues = createContextValues()
        .set(clientAddressKey, options.clientAddress(req))
        .set(protocolKey, protocolOf(req));
      handler(universalRequestOf(req, res, contextValues))
        .then((response) => {
          // A refusal answered without reading the body (D28), on HTTP/1.1: Connect and gRPC-Web.
          closeIfBodyUnread(req, res);
          return writeUniversalResponse(response, res);
        })
        .catch((reason) => {
          // A fault past the handlers' own error answers: the stream or connection is cut, so the client
          // learns of it at once instead of waiting on an answer that will not come.
          res.destroy();
          if (ConnectError.from(reason).code === Code.Aborted) return;
          logger.error({ err: reason, rpc: handler.requestPath }, "rpc handler failed");
        });
    },
  };
}

/** Each request's client address: the peer's, or whom a trusted proxy says it forwards for (issue 16). */
export function clientAddressResolver(trusted: TrustedProxies): ClientAddress {
  return (req) => clientAddressOf(req.socket?.remoteAddress, req.headers["x-forwarded-for"], trusted);
}
