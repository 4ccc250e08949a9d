import type { DescMethod, DescService } from "@bufbuild/protobuf";
import {
  type ConnectRouter,
  createMethodImplSpec,
  createServiceImplSpec,
  type MethodImpl,
  type ServiceImpl,
} from "@connectrpc/connect";
import {
  createUniversalMethodHandler,
  createUniversalServiceHandlers,
  type ProtocolHandlerFactory,
  type UniversalHandler,
  type UniversalHandlerOptions,
  validateUniversalHandlerOptions,
} from "@connectrpc/connect/protocol";
import { createHandlerFactory as createConnectHandlerFactory } from "@connectrpc/connect/protocol-connect";
import { createHandlerFactory as createGrpcWebHandlerFactory } from "@connectrpc/connect/protocol-grpc-web";
import { createGrpcHandlerFactory } from "./grpc-unary.js";

/**
 * `createConnectRouter` with flowlog's gRPC handler for unary RPCs (grpc-unary.ts); gRPC-Web and Connect
 * are Connect's own. Connect's router takes no protocol of its own, so this builds the same handlers from
 * the same public parts. Options are given once, for every service.
 */
export function createRouter(options: Partial<UniversalHandlerOptions>): ConnectRouter {
  const opt = validateUniversalHandlerOptions(options);
  const protocols: ProtocolHandlerFactory[] = [
    createGrpcHandlerFactory(opt),
    createGrpcWebHandlerFactory(opt),
    createConnectHandlerFactory(opt),
  ];
  const handlers: UniversalHandler[] = [];
  const router: ConnectRouter = {
    handlers,
    service<T extends DescService>(service: T, implementation: Partial<ServiceImpl<T>>, more?: object) {
      noMoreOptions(more);
      handlers.push(
        ...createUniversalServiceHandlers(createServiceImplSpec(service, implementation), protocols),
      );
      return router;
    },
    rpc<M extends DescMethod>(method: M, impl: MethodImpl<M>, more?: object) {
      noMoreOptions(more);
      handlers.push(createUniversalMethodHandler(createMethodImplSpec(method, impl), protocols));
      return router;
    },
  };
  return router;
}

function noMoreOptions(options: object | undefined): void {
  if (options !== undefined) throw new Error("flowlog's router takes its options once, when it is created");
}
