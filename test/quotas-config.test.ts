import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config/config.js";
import { defaultConnectionLimits, defaultQuotas } from "../src/limits/quotas.js";
import { retentionScheduleIdFor } from "../src/temporal/retention-schedule.js";

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error("the configuration was accepted");
}

describe("Quotas and connection limits are configurable: FLOWLOG_QUOTAS (D26), FLOWLOG_CONNECTIONS (D27)", () => {
  it("without the variables, the tables are the decisions' defaults", () => {
    const config = loadConfig({});
    expect(config.quotas).toEqual(defaultQuotas);
    expect(config.connections).toEqual(defaultConnectionLimits);
    expect(config.quotas.requestBodyBytes).toBe(1024 * 1024);
    expect(config.quotas.workspace.concurrentBlockActivities).toBe(20);
    expect(config.connections.headersTimeoutMs).toBe(10_000);
  });

  it("merges a deep-partial override, leaving every other figure as it was", () => {
    const config = loadConfig({
      FLOWLOG_QUOTAS: '{"requestBodyBytes": 4096, "workspace": {"subscriptions": 5}}',
      FLOWLOG_CONNECTIONS: '{"maxConnections": 10}',
    });
    expect(config.quotas).toEqual({
      ...defaultQuotas,
      requestBodyBytes: 4096,
      workspace: { ...defaultQuotas.workspace, subscriptions: 5 },
    });
    expect(config.connections).toEqual({ ...defaultConnectionLimits, maxConnections: 10 });
  });

  it("refuses an unknown key, a bad number or text that is not JSON, naming the path", () => {
    expect(problemsOf({ FLOWLOG_QUOTAS: '{"workspace": {"subscription": 5}}' })).toEqual([
      expect.stringMatching(
        /^FLOWLOG_QUOTAS\.workspace\.subscription: unknown quota; expected one of subscriptions,/,
      ),
    ]);
    expect(problemsOf({ FLOWLOG_QUOTAS: '{"httpBlock": {"maxRetries": 0}}' })).toEqual([
      "FLOWLOG_QUOTAS.httpBlock.maxRetries: must be a positive integer",
    ]);
    expect(problemsOf({ FLOWLOG_CONNECTIONS: '{"bodyTimeoutMs": "30s"}' })).toEqual([
      "FLOWLOG_CONNECTIONS.bodyTimeoutMs: must be a positive integer",
    ]);
    expect(problemsOf({ FLOWLOG_CONNECTIONS: "{nope" })).toEqual(["FLOWLOG_CONNECTIONS: must be JSON"]);
  });
});

describe("FLOWLOG_TRUSTED_PROXIES (issue 16): the load balancers whose X-Forwarded-For names the client", () => {
  it("takes addresses and CIDR ranges, comma-separated, and is empty by default", () => {
    expect(loadConfig({}).trustedProxies).toEqual([]);
    expect(loadConfig({ FLOWLOG_TRUSTED_PROXIES: " 10.0.0.0/8, 127.0.0.1 ,::1" }).trustedProxies).toEqual([
      "10.0.0.0/8",
      "127.0.0.1",
      "::1",
    ]);
  });

  it("refuses an entry that is neither, naming it", () => {
    expect(problemsOf({ FLOWLOG_TRUSTED_PROXIES: "127.0.0.1,nginx.internal" })).toEqual([
      'FLOWLOG_TRUSTED_PROXIES: "nginx.internal" is neither an IP address nor a CIDR range',
    ]);
  });
});

describe("FLOWLOG_TASK_QUEUE: the queue a deployment's executions run on", () => {
  it("is flowlog unless told, with the retention Schedule flowlog-retention; another names its own Schedule", () => {
    expect(loadConfig({}).taskQueue).toBeUndefined();
    expect(loadConfig({ FLOWLOG_TASK_QUEUE: "" }).taskQueue).toBeUndefined();
    expect(retentionScheduleIdFor(loadConfig({}).taskQueue)).toBe("flowlog-retention");
    expect(loadConfig({ FLOWLOG_TASK_QUEUE: "billing.flowlog" }).taskQueue).toBe("billing.flowlog");
    expect(retentionScheduleIdFor("billing.flowlog")).toBe("flowlog-retention-billing.flowlog");
    expect(retentionScheduleIdFor("flowlog")).toBe("flowlog-retention");
  });

  it("refuses a name Temporal's UI and CLI would need quoting for, or a long one, naming the variable", () => {
    for (const bad of ["two words", "queue/1", "x".repeat(101)]) {
      expect(problemsOf({ FLOWLOG_TASK_QUEUE: bad }), bad).toEqual([
        "FLOWLOG_TASK_QUEUE: must be 1 to 100 letters, digits, dots, dashes or underscores",
      ]);
    }
  });
});

describe("FLOWLOG_WORKER_ROLES and FLOWLOG_WORKER_DELIVERY_PACE (issue 51): what a worker runs, and its pace", () => {
  it("runs both roles unless told, and takes either or both, each once, in any order", () => {
    expect(loadConfig({}).workerRoles).toEqual(["executions", "deliveries"]);
    expect(loadConfig({ FLOWLOG_WORKER_ROLES: "" }).workerRoles).toEqual(["executions", "deliveries"]);
    expect(loadConfig({ FLOWLOG_WORKER_ROLES: "deliveries" }).workerRoles).toEqual(["deliveries"]);
    expect(loadConfig({ FLOWLOG_WORKER_ROLES: " executions " }).workerRoles).toEqual(["executions"]);
    expect(loadConfig({ FLOWLOG_WORKER_ROLES: "deliveries, executions,deliveries" }).workerRoles).toEqual([
      "executions",
      "deliveries",
    ]);
  });

  it("refuses an entry that is not a role, naming it", () => {
    expect(problemsOf({ FLOWLOG_WORKER_ROLES: "executions,delivery" })).toEqual([
      'FLOWLOG_WORKER_ROLES: "delivery" is not a role: must list executions, deliveries or both, comma-separated',
    ]);
    expect(problemsOf({ FLOWLOG_WORKER_ROLES: "executions," })).toEqual([
      'FLOWLOG_WORKER_ROLES: "" is not a role: must list executions, deliveries or both, comma-separated',
    ]);
  });

  it("sets no pace unless told; a pace is a positive number of deliveries a second", () => {
    expect(loadConfig({}).workerDeliveriesPerSecond).toBeUndefined();
    expect(loadConfig({ FLOWLOG_WORKER_DELIVERY_PACE: "2.5" }).workerDeliveriesPerSecond).toBe(2.5);
    for (const bad of ["0", "-1", "fast", "Infinity"]) {
      expect(problemsOf({ FLOWLOG_WORKER_DELIVERY_PACE: bad }), bad).toEqual([
        "FLOWLOG_WORKER_DELIVERY_PACE: must be a positive number of deliveries a second",
      ]);
    }
  });
});
