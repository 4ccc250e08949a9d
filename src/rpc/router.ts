import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  type ConnectRouter,
  createMethodImplSpec,
  createServiceImplSpec,
  type MethodImpl,
  type MethodImplSpec,
  type ServiceImpl,
} from "@connectrpc/connect";
import {
  createMethodUrl,
  createUniversalMethodHandler,
  createUniversalServiceHandlers,
  type ProtocolHandlerFactory,
  type UniversalHandler,
  type UniversalHandlerOptions,
  validateUniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import { createConnectUnaryHandlerFactory } from "./connect-unary.js";
import { createGrpcHandlerFactory, createGrpcWebHandlerFactory } from "./grpc-unary.js";
import { createJsonStreamCall, type JsonStreamCall } from "./json-stream.js";
import { createJsonCall, type JsonCall } from "./json-unary.js";

/**
 * Connect's router, and each unary and server-streaming RPC as an in-process JSON call for the REST
 * gateway, by request path.
 */
export interface FlowlogRouter extends ConnectRouter {
  readonly jsonCalls: ReadonlyMap<string, JsonCall>;
  readonly jsonStreamCalls: ReadonlyMap<string, JsonStreamCall>;
}

/**
 * `createConnectRouter` with flowlog's handlers for unary RPCs over gRPC, gRPC-Web (grpc-unary.ts) and
 * Connect's POST (connect-unary.ts), and the REST gateway's JSON calls (json-unary.ts) from the same
 * implementations and options; Connect's GET and every streaming RPC are Connect's own handlers. Connect's router takes no protocol handler
 * of anyone else's, so this builds the same handlers from the same parts. Options are given once, for
 * every service.
 */
export function createRouter(options: Partial<UniversalHandlerOptions>): FlowlogRouter {
  const opt = validateUniversalHandlerOptions(options);
  const protocols: ProtocolHandlerFactory[] = [
    createGrpcHandlerFactory(opt),
    createGrpcWebHandlerFactory(opt),
    createConnectUnaryHandlerFactory(opt),
  ];
  const handlers: UniversalHandler[] = [];
  const jsonCalls = new Map<string, JsonCall>();
  const jsonStreamCalls = new Map<string, JsonStreamCall>();
  const addJsonCall = (spec: MethodImplSpec) => {
    const path = createMethodUrl("/", spec.method);
    if (spec.kind === "unary") jsonCalls.set(path, createJsonCall(opt, spec));
    if (spec.kind === "server_streaming") jsonStreamCalls.set(path, createJsonStreamCall(opt, spec));
  };
  const router: FlowlogRouter = {
    handlers,
    jsonCalls,
    jsonStreamCalls,
    service<T extends DescService>(service: T, implementation: Partial<ServiceImpl<T>>, more?: object) {
      noMoreOptions(more);
      const spec = createServiceImplSpec(service, implementation);
      handlers.push(...createUniversalServiceHandlers(spec, protocols));
      for (const method of Object.values(spec.methods)) addJsonCall(method);
      return router;
    },
    rpc<M extends DescMethod>(method: M, impl: MethodImpl<M>, more?: object) {
      noMoreOptions(more);
      const spec = createMethodImplSpec(method, impl);
      handlers.push(createUniversalMethodHandler(spec, protocols));
      addJsonCall(spec);
      return router;
    },
  };
  return router;
}

function noMoreOptions(options: object | undefined): void {
  if (options !== undefined) throw new Error("flowlog's router takes its options once, when it is created");
}
