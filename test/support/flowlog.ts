import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Interceptor } from "@grpc/grpc-js";
import { inject } from "vitest";
import { defaultPlanLimits, type PlanTable } from "../../src/limits/plans.js";
import type { Quotas } from "../../src/limits/quotas.js";
import type { Logger } from "../../src/logging/logger.js";
import { createApi } from "../../src/server/api.js";
import type { ApiServer } from "../../src/server/api-server.js";
import { apiKeyPrefix, generateApiKey, hashApiKey } from "../../src/services/accounts/api-keys.js";
import type { DeliveryRecord } from "../../src/store/delivery-rows.js";
import type { ExecutionRecord, Plan } from "../../src/store/records.js";
import type { Store } from "../../src/store/store.js";
import type { ChannelConfigInput, NewSubscription } from "../../src/store/subscriptions-store.js";
import { lazyTemporalClient } from "../../src/temporal/client.js";
import { newId } from "../../src/util/ids.js";
import { startTestApiServer } from "./api-server.js";
import { openTestStore, type TestStore } from "./test-store.js";

export const operatorToken = "test-operator-token-0123456789";

export interface TestFlowlog extends Omit<TestStore, "store"> {
  server: ApiServer;
  store: Store;
  dataDir: string;
  /** Stops the API server and starts another on the same store (a new port), as a restart of `flowlog serve`. */
  restartServer(): Promise<void>;
  /**
   * Another API on the same store whose executions and jobs start on `taskQueue`, on this flowlog's plan
   * table or the one given: its URL.
   */
  apiOn(taskQueue: string, planLimits?: PlanTable): Promise<string>;
  close(): Promise<void>;
}

/** The whole API on a random port over a fresh store of the project's kind (test-store.ts), as a test file needs it. */
export async function startFlowlog(
  options: {
    clock?: () => number;
    taskQueue?: string;
    planLimits?: PlanTable;
    quotas?: Quotas;
    /** On the Temporal client's connection, as `flowlog serve` puts its metrics' interceptor there. */
    temporalInterceptors?: Interceptor[];
    /** Where the API's audit lines go (D43), for a test that reads them. */
    logger?: Logger;
    /** The Temporal frontend it starts executions on, for a file with a server of its own. */
    temporalServer?: { address: string; namespace: string };
  } = {},
): Promise<TestFlowlog> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-test-"));
  const { store, ...outside } = await openTestStore(dataDir);
  // The run's one dev server (global setup) unless another is given; connected only by tests that start
  // executions.
  const temporalServer = options.temporalServer ?? {
    address: inject("temporalAddress"),
    namespace: inject("temporalNamespace"),
  };
  const client = lazyTemporalClient(
    temporalServer.address,
    temporalServer.namespace,
    options.temporalInterceptors,
  );
  const config = {
    operatorToken,
    publicBaseUrl: "http://flowlog.test",
    planLimits: options.planLimits ?? defaultPlanLimits,
    quotas: options.quotas,
  };
  const startServer = (taskQueue = options.taskQueue, planLimits = config.planLimits) =>
    startTestApiServer(
      createApi({
        config: { ...config, planLimits },
        store,
        temporal: { client, taskQueue },
        clock: options.clock,
        logger: options.logger,
      }),
    );
  const others: ApiServer[] = [];
  const flowlog: TestFlowlog = {
    ...outside,
    server: await startServer(),
    store,
    dataDir,
    restartServer: async () => {
      await flowlog.server.close();
      flowlog.server = await startServer();
    },
    apiOn: async (taskQueue, planLimits) => {
      const server = await startServer(taskQueue, planLimits);
      others.push(server);
      return server.url;
    },
    close: async () => {
      await Promise.all([flowlog.server, ...others].map((server) => server.close()));
      await store.close();
    },
  };
  return flowlog;
}

export interface TestAccount {
  userId: string;
  workspaceId: string;
  key: string;
  keyId: string;
}

/** A user with one workspace and a live key, written straight to the store. */
export async function createAccount(store: Store, plan: Plan = "enterprise"): Promise<TestAccount> {
  const now = Date.now();
  const userId = newId("usr");
  const workspaceId = newId("ws");
  const key = generateApiKey();
  const keyId = newId("key");
  await store.accounts.createUser({ id: userId, email: `${userId}@example.test`, plan, createdAt: now });
  await store.accounts.createWorkspace({ id: workspaceId, name: `workspace of ${userId}`, createdAt: now }, [
    userId,
  ]);
  await store.accounts.createApiKey(
    { id: keyId, userId, prefix: apiKeyPrefix(key), createdAt: now },
    hashApiKey(key),
  );
  return { userId, workspaceId, key, keyId };
}

/** What a test's subscription sets apart from the defaults: its settings, id, creation time and secret. */
export type SubscribeOptions = Partial<Omit<NewSubscription, "workspaceId" | "config">> & { secret?: string };

/**
 * A subscription of the workspace on any channel, made directly in the store: every workflow, level and
 * trigger, nothing extra in the event, active, no secret unless a webhook's is given; `options` override any
 * of that, and the id and creation time too.
 */
export async function subscribe(
  store: Store,
  workspaceId: string,
  config: ChannelConfigInput,
  options: SubscribeOptions = {},
): Promise<string> {
  const { secret = null, id = newId("sub"), createdAt = Date.now(), ...settings } = options;
  await store.notifications.create(
    {
      id,
      workspaceId,
      createdAt,
      config,
      allWorkflows: true,
      workflowIds: [],
      levelFilter: [],
      triggerFilter: [],
      include: { finalOutput: false, traceSpans: false, rateLimits: false, usage: false },
      alertRule: null,
      active: true,
      ...settings,
    },
    secret,
  );
  return id;
}

/** A webhook subscription of the workspace to `url`, as `subscribe` makes it. */
export function subscribeWebhook(
  store: Store,
  workspaceId: string,
  url: string,
  options: SubscribeOptions = {},
): Promise<string> {
  return subscribe(store, workspaceId, { channel: "webhook", url }, options);
}

/**
 * A delivery of the subscription as an outage that ended it leaves it in the store: a completion event made
 * at `createdAt`, one series of one attempt that the receiver answered 503, `failed` (what D37 recovers).
 */
export async function recordFailedDelivery(
  store: Store,
  subscription: { workspaceId: string; subscriptionId: string },
  createdAt: number,
  data: Record<string, unknown> = {},
): Promise<DeliveryRecord> {
  const event = { id: newId("evt"), type: "workflow.execution.completed", timestamp: createdAt, data };
  const delivery = await store.deliveries.createOnce({
    id: newId("dlv"),
    eventId: event.id,
    eventType: event.type,
    ...subscription,
    logId: null,
    event,
    createdAt,
  });
  await store.deliveries.recordAttempt(
    {
      deliveryId: delivery.id,
      series: 1,
      attempt: 1,
      startedAt: createdAt,
      durationMs: 3,
      outcome: "failed",
      httpStatus: 503,
      responseSnippet: "",
      error: "the receiver answered 503",
    },
    "failed",
  );
  return delivery;
}

/** A workflow in the account's workspace, with a small graph to snapshot unless another state is given. */
export async function createWorkflow(
  store: Store,
  workspaceId: string,
  name = "Nightly report",
  folderId: string | null = null,
  state: object = testWorkflowState,
) {
  const now = Date.now();
  const id = newId("wf");
  await store.workflows.createWorkflow({
    id,
    workspaceId,
    folderId,
    name,
    description: `${name}, for tests`,
    version: 1,
    state,
    createdAt: now,
    updatedAt: now,
  });
  return id;
}

/** A workflow that runs without any network: starter, then a response block. */
export const offlineWorkflowState = {
  blocks: {
    start: { type: "starter", name: "Start", config: {}, enabled: true },
    done: { type: "response", name: "Done", config: { data: { ok: true } }, enabled: true },
  },
  edges: [{ source: "start", target: "done" }],
  loops: {},
  parallels: {},
};

export const testWorkflowState = {
  blocks: {
    start: { type: "starter", name: "Start", config: {}, enabled: true },
    api: {
      type: "api",
      name: "API",
      config: { url: "https://example.test/items", method: "GET" },
      enabled: true,
    },
  },
  edges: [{ source: "start", target: "api" }],
  loops: {},
  parallels: {},
};

/** One execution with plausible values; override what the test is about. */
export function execution(
  account: TestAccount,
  workflowId: string,
  overrides: Partial<ExecutionRecord["entry"]> = {},
): ExecutionRecord {
  const startedAt = overrides.startedAt ?? Date.parse("2026-11-01T10:00:00.000Z");
  const totalDurationMs = overrides.totalDurationMs ?? 1234;
  return {
    workflowState: testWorkflowState,
    entry: {
      id: newId("log"),
      workspaceId: account.workspaceId,
      workflowId,
      folderId: null,
      executionId: newId("ex"),
      billedUserId: account.userId,
      level: "info",
      trigger: "api",
      startedAt,
      endedAt: startedAt + totalDurationMs,
      totalDurationMs,
      cost: {
        total: 0.0123,
        tokens: { prompt: 100, completion: 50, total: 150 },
        models: {
          "gpt-4o": {
            input: 0.0073,
            output: 0.005,
            total: 0.0123,
            tokens: { prompt: 100, completion: 50, total: 150 },
          },
        },
      },
      files: null,
      traceSpans: [
        {
          id: "span_1",
          name: "API",
          type: "api",
          status: "success",
          startTime: new Date(startedAt).toISOString(),
          endTime: new Date(startedAt + totalDurationMs).toISOString(),
          durationMs: totalDurationMs,
          input: { url: "https://example.test/items" },
          output: { status: 200 },
          children: [],
        },
      ],
      finalOutput: { items: 3 },
      ...overrides,
    },
  };
}

/**
 * A clock that moves one second per reading, so the API token bucket (D11) refills faster than a test
 * can drain it; tests about the rate limit use their own clock.
 */
export function steppingClock(start = Date.parse("2026-11-15T12:00:00.000Z")): () => number {
  let now = start;
  return () => {
    now += 1000;
    return now;
  };
}
