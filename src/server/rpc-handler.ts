import { type ConnectRouter, createContextValues } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";
import { protocolOf } from "../logging/metrics.js";
import { answerSerialization } from "../rpc/answer-serialization.js";
import type { JsonStreamCall } from "../rpc/json-stream.js";
import type { JsonCall } from "../rpc/json-unary.js";
import { createNodeListener } from "../rpc/node-adapter.js";
import type { ClientAddress, NodeRequest, NodeResponse } from "../rpc/node-http.js";
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
  /** Each server-streaming RPC likewise, for the gateway's Server-Sent Events (D44). */
  jsonStreamCalls: ReadonlyMap<string, JsonStreamCall>;
}

/**
 * The RPC paths of the API (src/rpc): every handler behind the front door, so that a request is admitted
 * from its headers before the handler reads its body (D28), and through the interceptors every protocol
 * shares. Compressed requests are accepted (gzip, br) within `readMaxBytes`, which Connect checks on the
 * decompressed size.
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
  const frontDoor: RequestGate = {
    admit: (request) => options.frontDoor.admit(request),
    answerHeaders: rateHeadersOf,
  };
  return {
    jsonCalls: router.jsonCalls,
    jsonStreamCalls: router.jsonStreamCalls,
    listener: createNodeListener({
      handlers: router.handlers.map((handler) => behindGate(handler, frontDoor)),
      fallback: options.fallback,
      contextValues: (req) =>
        createContextValues()
          .set(clientAddressKey, options.clientAddress(req))
          .set(protocolKey, protocolOf(req)),
    }),
  };
}

/** Each request's client address: the peer's, or whom a trusted proxy says it forwards for (issue 16). */
export function clientAddressResolver(trusted: TrustedProxies): ClientAddress {
  return (req) => clientAddressOf(req.socket?.remoteAddress, req.headers["x-forwarded-for"], trusted);
}
