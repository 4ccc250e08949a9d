import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { extractTraceContext, inSpan, SpanKind, tracingOn } from "../logging/tracing.js";
import { procedureOf, protocolKey } from "./front-door.js";

/**
 * D50: a server span per RPC, on every protocol (REST enters through the same interceptors), named
 * `package.Service/Method` as OpenTelemetry's RPC conventions name it and the child of the caller's
 * span when the request carries a W3C `traceparent`. Outermost in the chain, so it times the front door's
 * work and the handler's. A server-streaming RPC's span ends when its stream is handed over, not when it
 * ends. Its attributes are the procedure, the protocol and the answer's code: never a header or a field.
 */
export const tracingInterceptor: Interceptor = (next) => async (request) => {
  if (!tracingOn()) return next(request);
  const protocol = request.contextValues.get(protocolKey);
  const grpc = protocol === "grpc" || protocol === "grpc-web";
  const attributes = {
    "rpc.system": grpc ? "grpc" : "connect_rpc",
    "rpc.service": request.service.typeName,
    "rpc.method": request.method.name,
    "flowlog.protocol": protocol,
  };
  const parent = extractTraceContext(request.header);
  const codeOf = (error: unknown) => ConnectError.from(error).code;
  const errorType = (error: unknown) => codeToString(codeOf(error));
  const options = { kind: SpanKind.SERVER, attributes, parent, errorType };
  return inSpan(procedureOf(request.method), options, async (span) => {
    try {
      const response = await next(request);
      if (grpc) span?.setAttribute("rpc.grpc.status_code", 0);
      return response;
    } catch (error) {
      if (grpc) span?.setAttribute("rpc.grpc.status_code", codeOf(error));
      else span?.setAttribute("rpc.connect_rpc.error_code", errorType(error));
      throw error;
    }
  });
};
