import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { extractTraceContext, inSpan, SpanKind, type SpanOptions, tracingOn } from "../logging/tracing.js";
import { procedureOf, protocolKey } from "./front-door.js";

/**
 * D50: a server span per RPC, on every protocol (REST enters through the same interceptors), named
 * `package.Service/Method` as OpenTelemetry's RPC conventions name it and the child of the caller's
 * span when the request carries a W3C `traceparent`. Outermost in the chain, so it times the front door's
 * work and the handler's. A server-streaming RPC's span ends when its stream is handed over, not when it
 * ends. Its attributes are the procedure, the protocol and the answer's code: never a header or a field.
 * What does not depend on the request is made once, here, not per call (issue 55's cost goal).
 */
export const tracingInterceptor: Interceptor = (next) => (request) => {
  if (!tracingOn()) return next(request);
  const protocol = request.contextValues.get(protocolKey);
  const grpc = protocol === "grpc" || protocol === "grpc-web";
  const options: SpanOptions = {
    kind: SpanKind.SERVER,
    attributes: {
      "rpc.system": grpc ? "grpc" : "connect_rpc",
      "rpc.service": request.service.typeName,
      "rpc.method": request.method.name,
      "flowlog.protocol": protocol,
    },
    parent: extractTraceContext(request.header),
    errorType,
    settled: grpc ? grpcSettled : connectSettled,
  };
  return inSpan(procedureOf(request.method), options, () => next(request));
};

function errorType(error: unknown): string {
  return codeToString(ConnectError.from(error).code);
}

/** gRPC's conventions record every answer's status code, 0 for OK. */
const grpcSettled: SpanOptions["settled"] = (span, outcome) => {
  span.setAttribute("rpc.grpc.status_code", outcome.ok ? 0 : ConnectError.from(outcome.error).code);
};

/** Connect's record only an error's code, by its name. */
const connectSettled: SpanOptions["settled"] = (span, outcome) => {
  if (!outcome.ok) span.setAttribute("rpc.connect_rpc.error_code", errorType(outcome.error));
};
