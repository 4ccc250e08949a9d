import type { DescService } from "@bufbuild/protobuf";
import { type Client, Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import type { Limits } from "../../gen/flowlog/logs/v1/limits_pb.js";
import { LogsService } from "../../gen/flowlog/logs/v1/logs_service_pb.js";
import { DeliveriesService } from "../../gen/flowlog/notifications/v1/deliveries_service_pb.js";
import { NotificationsService } from "../../gen/flowlog/notifications/v1/notifications_service_pb.js";
import { WorkflowsService } from "../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { BadRequestSchema } from "../../gen/google/rpc/error_details_pb.js";

/**
 * The console is a client like any other (issue 17): Connect clients generated from the same .proto files
 * as the server, over the Connect protocol's JSON on the page's own origin. Proto-first end to end.
 */
export interface Api {
  logs: Client<typeof LogsService>;
  workflows: Client<typeof WorkflowsService>;
  notifications: Client<typeof NotificationsService>;
  deliveries: Client<typeof DeliveriesService>;
}

/**
 * Clients that send the key as `x-api-key` (D5) and hand every answer's limits object (D11, D12: every body
 * carries one) to `onLimits`, so the limits bar is as fresh as the last call of any page.
 */
export function createApi(apiKey: string, onLimits: (limits: Limits) => void): Api {
  const authenticate: Interceptor = (next) => async (request) => {
    request.header.set("x-api-key", apiKey);
    const response = await next(request);
    if (!response.stream) {
      const limits = (response.message as { limits?: Limits }).limits;
      if (limits) onLimits(limits);
    }
    return response;
  };
  const transport = createConnectTransport({ baseUrl: location.origin, interceptors: [authenticate] });
  const client = <S extends DescService>(service: S) => createClient(service, transport);
  return {
    logs: client(LogsService),
    workflows: client(WorkflowsService),
    notifications: client(NotificationsService),
    deliveries: client(DeliveriesService),
  };
}

/** The server's own words for a refusal (they name the field or the limit, D10), for the page to show. */
export function errorMessage(error: unknown): string {
  if (error instanceof ConnectError) {
    // The server's message usually names the field already (D10); the field goes after it only if not.
    const field = fieldOf(error);
    return field && !error.rawMessage.includes(field) ? `${error.rawMessage} (${field})` : error.rawMessage;
  }
  return error instanceof Error ? error.message : String(error);
}

/** Whether the key itself was refused: the console then asks for another. */
export function isUnauthenticated(error: unknown): boolean {
  return error instanceof ConnectError && error.code === Code.Unauthenticated;
}

function fieldOf(error: ConnectError): string | undefined {
  const fields = error
    .findDetails(BadRequestSchema)
    .flatMap((detail) => detail.fieldViolations.map((violation) => violation.field));
  return fields.length ? [...new Set(fields)].join(", ") : undefined;
}
