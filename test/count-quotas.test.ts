import { Client, Connection } from "@temporalio/client";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { restWithKey } from "./support/api-server.js";
import {
  createAccount,
  createWorkflow,
  startFlowlog,
  steppingClock,
  subscribeWebhook,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";

let flowlog: TestFlowlog;
let connection: Connection;
let temporal: Client;

beforeAll(async () => {
  flowlog = await startFlowlog({ clock: steppingClock() });
  const address = inject("temporalAddress");
  connection = await Connection.connect({ address });
  temporal = new Client({ connection, namespace: inject("temporalNamespace") });
});

afterAll(async () => {
  await connection?.close();
  await flowlog?.close();
});

type Json = Record<string, unknown>;

const call = (account: TestAccount, method: string, path: string, body?: unknown) =>
  restWithKey(flowlog.server.url, account.key, method, path, body);

/** The D26 answer to a count quota reached: 400 failed_precondition naming the quota and the holder. */
const quotaRefusal = (holder: string, counted: string, max: number, quota: string) => ({
  status: 400,
  code: "failed_precondition",
  detail: `${holder} has ${max} ${counted}, the most allowed is ${max} (D26 quota ${quota})`,
});

const webhookSubscription = (workflowId: string) => ({
  channel: "webhook",
  webhook: { url: "https://example.test/hook" },
  workflowIds: [workflowId],
});

describe("subscriptions: at most 50 per workspace (D26)", () => {
  const path = (account: TestAccount) => `/api/v1/workspaces/${account.workspaceId}/notifications`;
  /** A workspace that already has `count` subscriptions, written straight to the store. */
  const workspaceWith = async (count: number) => {
    const account = await createAccount(flowlog.store);
    const workflowId = await createWorkflow(flowlog.store, account.workspaceId);
    for (let i = 0; i < count; i++) {
      await subscribeWebhook(flowlog.store, account.workspaceId, "https://example.test/hook", {
        id: `sub_prefill_${account.workspaceId}_${i}`,
        allWorkflows: false,
        workflowIds: [workflowId],
      });
    }
    return { account, workflowId };
  };

  it("the 50th is created; the 51st is 400 failed_precondition naming the quota, and nothing is stored", async () => {
    const { account, workflowId } = await workspaceWith(49);

    const fiftieth = await call(account, "POST", path(account), webhookSubscription(workflowId));
    const fiftyFirst = await call(account, "POST", path(account), webhookSubscription(workflowId));

    expect(fiftieth.status, fiftieth.text).toBe(200);
    expect(fiftyFirst.status, fiftyFirst.text).toBe(400);
    expect(fiftyFirst.headers["content-type"]).toBe("application/problem+json");
    expect(fiftyFirst.json).toMatchObject(
      quotaRefusal(`workspace ${account.workspaceId}`, "subscriptions", 50, "workspace.subscriptions"),
    );
    expect(await flowlog.store.notifications.list(account.workspaceId)).toHaveLength(50);
  });

  it("a deleted subscription frees its place", async () => {
    const { account, workflowId } = await workspaceWith(50);
    const [first] = await flowlog.store.notifications.list(account.workspaceId);

    expect((await call(account, "POST", path(account), webhookSubscription(workflowId))).status).toBe(400);
    expect((await call(account, "DELETE", `${path(account)}/${first?.id}`)).status).toBe(200);
    expect((await call(account, "POST", path(account), webhookSubscription(workflowId))).status).toBe(200);
  });

  it("two creates at once with one place left: exactly one is created", async () => {
    const { account, workflowId } = await workspaceWith(49);

    const answers = await Promise.all(
      [1, 2].map(() => call(account, "POST", path(account), webhookSubscription(workflowId))),
    );

    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
    expect(await flowlog.store.notifications.list(account.workspaceId)).toHaveLength(50);
  });

  it("workflowIds of more than 100 values is 400 invalid_argument naming workflowIds and the limit", async () => {
    const { account } = await workspaceWith(0);
    const workflowIds = Array.from({ length: 101 }, (_, i) => `wf_${i}`);

    const refused = await call(account, "POST", path(account), {
      ...webhookSubscription("wf_0"),
      workflowIds,
    });

    expect(refused.status, refused.text).toBe(400);
    expect(refused.json).toMatchObject({
      code: "invalid_argument",
      errors: [{ field: "workflowIds", message: expect.stringMatching(/101 values; at most 100/) }],
    });
  });
});

describe("environment variables: at most 200 per workspace, each at most 64 KiB (D26)", () => {
  const path = (account: TestAccount, name: string) =>
    `/api/v1/workspaces/${account.workspaceId}/environment/${name}`;
  const workspaceWith = async (count: number) => {
    const account = await createAccount(flowlog.store);
    for (let i = 0; i < count; i++) {
      await flowlog.store.environment.set(account.workspaceId, `VAR_${i}`, "value", Date.now());
    }
    return account;
  };

  it("the 200th is set; the 201st is 400 failed_precondition naming the quota; a value of the 200 can still change", async () => {
    const account = await workspaceWith(199);

    const last = await call(account, "PUT", path(account, "LAST"), { value: "v" });
    const over = await call(account, "PUT", path(account, "ONE_TOO_MANY"), { value: "v" });
    const replaced = await call(account, "PUT", path(account, "VAR_0"), { value: "new value" });

    expect(last.status, last.text).toBe(200);
    expect(over.status, over.text).toBe(400);
    expect(over.json).toMatchObject(
      quotaRefusal(
        `workspace ${account.workspaceId}`,
        "environment variables",
        200,
        "workspace.environmentVariables",
      ),
    );
    expect(replaced.status, replaced.text).toBe(200);
    expect(await flowlog.store.environment.getDecrypted(account.workspaceId)).toMatchObject({
      VAR_0: "new value",
    });
    expect(await flowlog.store.environment.list(account.workspaceId)).toHaveLength(200);
  });

  it("two new names at once with one place left: exactly one is set", async () => {
    const account = await workspaceWith(199);

    const answers = await Promise.all(
      ["RACE_A", "RACE_B"].map((name) => call(account, "PUT", path(account, name), { value: "v" })),
    );

    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
    expect(await flowlog.store.environment.list(account.workspaceId)).toHaveLength(200);
  });

  it("a value of 64 KiB is kept; 64 KiB + 1 byte is 400 invalid_argument naming value", async () => {
    const account = await workspaceWith(0);

    const fits = await call(account, "PUT", path(account, "BIG"), { value: "x".repeat(64 * 1024) });
    const over = await call(account, "PUT", path(account, "BIGGER"), { value: "x".repeat(64 * 1024 + 1) });

    expect(fits.status, fits.text).toBe(200);
    expect(over.status, over.text).toBe(400);
    expect(over.json).toMatchObject({
      code: "invalid_argument",
      errors: [{ field: "value", message: expect.stringContaining("65536 bytes") }],
    });
    expect((await flowlog.store.environment.list(account.workspaceId)).map((v) => v.name)).toEqual(["BIG"]);
  });
});

describe("schedules: at most 10 per workflow, runs at least 60 s apart (D26)", () => {
  const yearly = "0 0 1 1 *";
  const path = (workflowId: string) => `/api/v1/workflows/${workflowId}/schedules`;
  /** A workflow with `count` schedules, created through the API so each has its Temporal Schedule. */
  const workflowWith = async (count: number) => {
    const account = await createAccount(flowlog.store);
    const workflowId = await createWorkflow(flowlog.store, account.workspaceId);
    for (let i = 0; i < count; i++) {
      const created = await call(account, "POST", path(workflowId), { cron: yearly });
      expect(created.status, created.text).toBe(200);
    }
    return { account, workflowId };
  };
  const temporalScheduleCount = async (workflowId: string) => {
    const ids = (await flowlog.store.triggers.listSchedules(workflowId)).map((s) => s.id);
    const described = await Promise.all(
      ids.map((id) =>
        temporal.schedule
          .getHandle(`flowlog-${id}`)
          .describe()
          .then(() => 1),
      ),
    );
    return described.length;
  };

  it("the 11th schedule of a workflow is 400 failed_precondition naming the quota, and no Temporal Schedule is made", async () => {
    const { account, workflowId } = await workflowWith(10);

    const eleventh = await call(account, "POST", path(workflowId), { cron: yearly });

    expect(eleventh.status, eleventh.text).toBe(400);
    expect(eleventh.json).toMatchObject(
      quotaRefusal(`workflow ${workflowId}`, "schedules", 10, "workflow.maxSchedules"),
    );
    const listed = await call(account, "GET", path(workflowId));
    expect((listed.json as { schedules: Json[] }).schedules).toHaveLength(10);
    expect(await temporalScheduleCount(workflowId)).toBe(10);
  });

  it("two creates at once with one place left: exactly one is created, in flowlog and in Temporal", async () => {
    const { account, workflowId } = await workflowWith(9);

    const answers = await Promise.all(
      [1, 2].map(() => call(account, "POST", path(workflowId), { cron: yearly })),
    );

    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
    expect(await flowlog.store.triggers.listSchedules(workflowId)).toHaveLength(10);
    expect(await temporalScheduleCount(workflowId)).toBe(10);
  });

  it.each([
    ["@every 1s", "1 s apart"],
    ["@every 59s", "59 s apart"],
    ["* * * * * * *", "1 s apart"],
    ["*/10 * * * * * *", "10 s apart"],
    ["0,30 * * * * * *", "30 s apart"],
    ["@every 1 s", "@every needs an interval"],
  ])("%j fires more often than once a minute: 400 invalid_argument naming cron", async (cron, why) => {
    const { account, workflowId } = await workflowWith(0);

    const refused = await call(account, "POST", path(workflowId), { cron });

    expect(refused.status, refused.text).toBe(400);
    expect(refused.json).toMatchObject({
      code: "invalid_argument",
      errors: [{ field: "cron", message: expect.stringContaining(why) }],
    });
    expect(await flowlog.store.triggers.listSchedules(workflowId)).toEqual([]);
  });

  // Temporal reads 6 fields as minute to year (ScheduleSpec.cron_string), so `* * * * * *` is every minute.
  it.each(["@every 60s", "@every 1m", "* * * * *", "* * * * * *", "0 * * * * * *", "@hourly"])(
    "%j is at least 60 s apart and is accepted",
    async (cron) => {
      const { account, workflowId } = await workflowWith(0);

      const created = await call(account, "POST", path(workflowId), { cron });

      expect(created.status, created.text).toBe(200);
      // Accepted means running: end it so the dev server does not start executions for this test.
      const { schedule } = created.json as { schedule: { id: string } };
      expect((await call(account, "DELETE", `/api/v1/schedules/${schedule.id}`)).status).toBe(200);
    },
  );
});

describe("list parameters of the logs API: at most 100 values each (D26)", () => {
  it.each(["workflowIds", "folderIds", "triggers"])(
    "101 %s is 400 invalid_argument naming the field and the limit; 100 is fine",
    async (field) => {
      const account = await createAccount(flowlog.store);
      const value = field === "triggers" ? "api" : "id_x";
      const query = (count: number) => {
        const params = new URLSearchParams({ workspaceId: account.workspaceId });
        for (let i = 0; i < count; i++) params.append(field, value);
        return `/api/v1/logs?${params}`;
      };

      const refused = await call(account, "GET", query(101));
      const fine = await call(account, "GET", query(100));

      expect(refused.status, refused.text).toBe(400);
      expect(refused.json).toMatchObject({
        code: "invalid_argument",
        errors: [{ field, message: `${field} holds 101 values; at most 100 are allowed (D26)` }],
      });
      expect(fine.status, fine.text).toBe(200);
    },
  );
});
