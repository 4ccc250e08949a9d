import type { Client } from "@temporalio/client";
import { LogsService } from "../../gen/flowlog/logs/v1/logs_service_pb.js";
import { DeliveriesService } from "../../gen/flowlog/notifications/v1/deliveries_service_pb.js";
import { NotificationsService } from "../../gen/flowlog/notifications/v1/notifications_service_pb.js";
import { TriggersService } from "../../gen/flowlog/workflows/v1/triggers_service_pb.js";
import { WorkflowsService } from "../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import type { Config } from "../config/config.js";
import { createApiRateLimiter } from "../limits/api-rate-limit.js";
import { createFailedAuthenticationThrottle } from "../limits/failed-authentication-throttle.js";
import { defaultQuotas, type Quotas } from "../limits/quotas.js";
import type { Logger } from "../logging/logger.js";
import { AccountsService } from "../services/accounts/accounts-service.js";
import { createAdminService } from "../services/accounts/admin-service.js";
import { createDeliveriesService } from "../services/deliveries/deliveries-service.js";
import { createBulkCancel } from "../services/executions/bulk-cancel.js";
import { createBulkJobControls } from "../services/executions/bulk-retry.js";
import { createExecutionControls } from "../services/executions/execution-controls.js";
import { LogTails } from "../services/logs/log-tails.js";
import { createLogsService } from "../services/logs/logs-service.js";
import { createSubscriptionsService } from "../services/notifications/subscriptions-service.js";
import { createCallTriggers } from "../services/triggers/call-triggers.js";
import { createTriggersService } from "../services/triggers/triggers-service.js";
import { endWorkflowTriggers } from "../services/triggers/workflow-retirement.js";
import { createWorkflowsService } from "../services/workflows/workflows-service.js";
import type { Store } from "../store/store.js";
import { watchNewWorkflow } from "../temporal/start-inactivity-watch.js";
import type { ApiServerOptions } from "./api-server.js";
import { createAuthenticator } from "./authentication.js";
import { createFrontDoor } from "./front-door.js";

export interface ApiDependencies {
  config: Pick<Config, "operatorToken" | "publicBaseUrl" | "planLimits"> & { quotas?: Quotas };
  store: Store;
  /** Where executions run (D3); tests give their workers' own task queue. */
  temporal: { client: Client; taskQueue?: string };
  clock?: () => number;
  /** Where the services' audit lines go (D43); the process's logger unless a test reads them. */
  logger?: Logger;
}

/** The services behind the port and the front door before them, built from the store (D23). */
export function createApi({
  config,
  store,
  temporal,
  clock = Date.now,
  logger,
}: ApiDependencies): Required<Pick<ApiServerOptions, "implementations" | "frontDoor" | "streams">> {
  const { planLimits } = config;
  const quotas = config.quotas ?? defaultQuotas;
  const executions = {
    store,
    planLimits,
    quotas,
    temporal: temporal.client,
    taskQueue: temporal.taskQueue,
    clock,
  };
  const tails = new LogTails(store);
  return {
    streams: tails,
    implementations: {
      logs: createLogsService({ store, planLimits, quotas, clock, logger, tails }),
      workflows: {
        ...createWorkflowsService({
          store,
          clock,
          quotas,
          onWorkflowCreated: (workflow) => watchNewWorkflow(temporal, store, workflow.workspaceId, clock()),
          onWorkflowDeleted: (workflow) => endWorkflowTriggers({ store, temporal }, workflow),
        }),
        ...createCallTriggers(executions),
        ...createExecutionControls(executions),
        ...createBulkJobControls(executions),
        ...createBulkCancel(executions),
      },
      triggers: createTriggersService({ ...executions, publicBaseUrl: config.publicBaseUrl }),
      notifications: createSubscriptionsService({ store, clock, temporal, quotas }),
      deliveries: createDeliveriesService(executions),
      admin: createAdminService(new AccountsService(store.accounts, clock)),
    },
    frontDoor: createFrontDoor({
      authenticator: createAuthenticator({
        accounts: store.accounts,
        userKeyServices: [
          LogsService,
          WorkflowsService,
          TriggersService,
          NotificationsService,
          DeliveriesService,
        ],
        selfAuthenticatingMethods: [TriggersService.method.invokeWebhook],
        operatorToken: config.operatorToken,
        clock,
      }),
      rateLimiter: createApiRateLimiter(store, planLimits, clock),
      failedAuthentications: createFailedAuthenticationThrottle(quotas.failedAuthenticationsPerMinute, clock),
    }),
  };
}
