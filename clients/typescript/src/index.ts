import type { DescService } from "@bufbuild/protobuf";
import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";

export { type VerifyWebhookOptions, verifyWebhook, type WebhookHeaders } from "./webhooks.js";

export interface FlowlogClientOptions {
  /** Where flowlog serves its API, e.g. `http://127.0.0.1:3000`: every protocol is on that one port. */
  baseUrl: string;
  /** A workspace member's API key (`flk_…`), sent as `x-api-key` on every call. */
  apiKey: string;
  /** `connect` (the default) over HTTP/1.1, or `grpc` over HTTP/2, as internal gRPC services call. */
  protocol?: "connect" | "grpc";
}

/**
 * A client of one flowlog service, e.g. `createFlowlogClient(LogsService, { baseUrl, apiKey })` with
 * `LogsService` from `@flowlog/client/gen/flowlog/logs/v1/logs_service_pb`. Its methods are the service's
 * RPCs in lowerCamelCase; a server stream such as `tailLogs` is an async iterable.
 */
export function createFlowlogClient<T extends DescService>(
  service: T,
  options: FlowlogClientOptions,
): Client<T> {
  const withKey: Interceptor = (next) => (request) => {
    request.header.set("x-api-key", options.apiKey);
    return next(request);
  };
  const transport =
    options.protocol === "grpc"
      ? createGrpcTransport({ baseUrl: options.baseUrl, interceptors: [withKey] })
      : createConnectTransport({ baseUrl: options.baseUrl, httpVersion: "1.1", interceptors: [withKey] });
  return createClient(service, transport);
}
