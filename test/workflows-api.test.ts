import { Code, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowsService } from "../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { BadRequestSchema } from "../gen/google/rpc/error_details_pb.js";
import { clientWithKey, rest, restWithKey, rpcError } from "./support/api-server.js";
import {
  createAccount,
  execution,
  startFlowlog,
  steppingClock,
  type TestAccount,
  type TestFlowlog,
} from "./support/flowlog.js";
import { isoMs } from "./support/formats.js";

let flowlog: TestFlowlog;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  flowlog = await startFlowlog({ clock: steppingClock() });
  alice = await createAccount(flowlog.store);
  bob = await createAccount(flowlog.store);
});
afterAll(() => flowlog.close());

type Json = Record<string, unknown>;
type WorkflowJson = Json & { id: string; version: number; state: Json };

/** A REST call with a key (Alice's unless another is given) and a JSON body when there is one. */
const call = (method: string, path: string, body?: unknown, key: string | null = alice.key) =>
  restWithKey(flowlog.server.url, key, method, path, body);

function state(url = "https://example.test/status") {
  return {
    blocks: {
      start: { type: "starter", name: "Start" },
      api: { type: "api", name: "API", config: { method: "GET", url } },
      done: { type: "response", name: "Done", config: { data: "<api.data>" } },
    },
    edges: [
      { source: "start", target: "api" },
      { source: "api", target: "done" },
    ],
  };
}

async function createOverRest(name: string, extra: Json = {}, workspaceId = alice.workspaceId) {
  const response = await call("POST", `/api/v1/workspaces/${workspaceId}/workflows`, {
    name,
    description: `${name}, for tests`,
    state: state(),
    ...extra,
  });
  expect(response.status, response.text).toBe(200);
  return (response.json as { workflow: WorkflowJson }).workflow;
}

const connectClient = (key: string) => clientWithKey(WorkflowsService, flowlog.server.url, key);

describe("workflow definitions over REST (D13)", () => {
  it("creates a workflow at version 1 and reads it back, every block saved with enabled and config", async () => {
    const created = await createOverRest("Status check");
    expect(created).toMatchObject({
      workspaceId: alice.workspaceId,
      name: "Status check",
      description: "Status check, for tests",
      version: 1,
      state: { blocks: { start: { type: "starter", name: "Start", enabled: true, config: {} } } },
    });
    expect(created.id).toMatch(/^wf_/);
    expect(created.createdAt).toMatch(isoMs);
    expect(created).not.toHaveProperty("folderId");
    const read = await call("GET", `/api/v1/workflows/${created.id}`);
    expect(read.status).toBe(200);
    expect((read.json as { workflow: Json }).workflow).toEqual(created);
  });

  it("each update saves a new version; fields left out keep their values", async () => {
    const created = await createOverRest("Versioned");
    const renamed = await call("PUT", `/api/v1/workflows/${created.id}`, { name: "Versioned, renamed" });
    expect((renamed.json as { workflow: WorkflowJson }).workflow).toMatchObject({
      version: 2,
      name: "Versioned, renamed",
      description: "Versioned, for tests",
      state: created.state,
    });
    const changed = await call("PUT", `/api/v1/workflows/${created.id}`, {
      state: state("https://example.test/v3"),
    });
    const third = (changed.json as { workflow: WorkflowJson }).workflow;
    expect(third.version).toBe(3);
    expect(third.state).toMatchObject({ blocks: { api: { config: { url: "https://example.test/v3" } } } });
    expect(
      ((await call("GET", `/api/v1/workflows/${created.id}`)).json as { workflow: Json }).workflow,
    ).toEqual(third);
  });

  it("every earlier version stays readable, through the store for the engine and through the API", async () => {
    const created = await createOverRest("History");
    await call("PUT", `/api/v1/workflows/${created.id}`, {
      name: "History 2",
      state: state("https://example.test/2"),
    });
    const first = await flowlog.store.workflows.getWorkflowVersion(created.id, 1);
    expect(first).toMatchObject({
      workflowId: created.id,
      version: 1,
      name: "History",
      state: created.state,
    });
    expect((await flowlog.store.workflows.getWorkflowVersion(created.id, 2))?.state).toMatchObject({
      blocks: { api: { config: { url: "https://example.test/2" } } },
    });
    expect(await flowlog.store.workflows.getWorkflowVersion(created.id, 3)).toBeUndefined();
    const old = await call("GET", `/api/v1/workflows/${created.id}?version=1`);
    expect((old.json as { workflow: Json }).workflow).toMatchObject({
      version: 1,
      name: "History",
      state: created.state,
    });
    const missing = await call("GET", `/api/v1/workflows/${created.id}?version=9`);
    expect(missing.status).toBe(404);
  });

  it("lists the workspace's workflows by name, and one folder's when asked", async () => {
    const folder = await call("POST", `/api/v1/workspaces/${alice.workspaceId}/folders`, { name: "Reports" });
    expect(folder.status).toBe(200);
    const folderId = (folder.json as { folder: Json }).folder.id as string;
    expect(folderId).toMatch(/^fld_/);
    const inFolder = await createOverRest("A report", { folderId });
    expect(inFolder.folderId).toBe(folderId);
    const all = (await call("GET", `/api/v1/workspaces/${alice.workspaceId}/workflows`)).json as {
      workflows: Json[];
    };
    const names = all.workflows.map((w) => w.name as string);
    expect(names).toContain("A report");
    expect(names).toEqual(names.toSorted());
    const filtered = (
      await call("GET", `/api/v1/workspaces/${alice.workspaceId}/workflows?folderId=${folderId}`)
    ).json as { workflows: Json[] };
    expect(filtered.workflows.map((w) => w.id)).toEqual([inFolder.id]);
    const folders = (await call("GET", `/api/v1/workspaces/${alice.workspaceId}/folders`)).json as {
      folders: Json[];
    };
    expect(folders.folders).toContainEqual({
      id: folderId,
      workspaceId: alice.workspaceId,
      name: "Reports",
      createdAt: expect.stringMatching(isoMs),
    });
  });

  it('moves a workflow between folders, and to the top level with folderId ""', async () => {
    const folder = await call("POST", `/api/v1/workspaces/${alice.workspaceId}/folders`, { name: "Moves" });
    const folderId = (folder.json as { folder: Json }).folder.id;
    const workflow = await createOverRest("Mover");
    const moved = await call("PUT", `/api/v1/workflows/${workflow.id}`, { folderId });
    expect((moved.json as { workflow: Json }).workflow.folderId).toBe(folderId);
    const back = await call("PUT", `/api/v1/workflows/${workflow.id}`, { folderId: "" });
    expect((back.json as { workflow: Json }).workflow).not.toHaveProperty("folderId");
  });

  it("refuses a folder of another workspace as if it did not exist", async () => {
    const bobsFolder = await call(
      "POST",
      `/api/v1/workspaces/${bob.workspaceId}/folders`,
      { name: "Bob's" },
      bob.key,
    );
    const folderId = (bobsFolder.json as { folder: Json }).folder.id;
    const response = await call("POST", `/api/v1/workspaces/${alice.workspaceId}/workflows`, {
      name: "Sneaky",
      folderId,
      state: state(),
    });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({
      errors: [
        { field: "folderId", message: `folder ${folderId} does not exist in workspace ${alice.workspaceId}` },
      ],
    });
  });

  it("deleting a workflow hides it from reads and lists, while its logs keep working (D17)", async () => {
    const workflow = await createOverRest("Short-lived");
    const ran = execution(alice, workflow.id);
    await flowlog.store.logs.insertExecution(ran);
    const deleted = await call("DELETE", `/api/v1/workflows/${workflow.id}`);
    expect(deleted.status).toBe(200);
    expect((await call("GET", `/api/v1/workflows/${workflow.id}`)).status).toBe(404);
    expect((await call("PUT", `/api/v1/workflows/${workflow.id}`, { name: "again" })).status).toBe(404);
    expect((await call("DELETE", `/api/v1/workflows/${workflow.id}`)).status).toBe(404);
    const list = (await call("GET", `/api/v1/workspaces/${alice.workspaceId}/workflows`)).json as {
      workflows: Json[];
    };
    expect(list.workflows.map((w) => w.id)).not.toContain(workflow.id);
    const log = await call("GET", `/api/v1/logs/${ran.entry.id}`);
    expect(log.status).toBe(200);
    expect((log.json as { data: Json }).data.workflow).toMatchObject({
      id: workflow.id,
      name: "Short-lived",
    });
    expect((await call("GET", `/api/v1/logs/executions/${ran.entry.executionId}`)).status).toBe(200);
  });
});

describe("validation on save", () => {
  it("answers 400 problem+json naming every broken rule by its field (D10)", async () => {
    const broken = state();
    broken.edges.push({ source: "done", target: "nowhere" });
    (broken.blocks.api.config as Json).url = "https://example.test/<api.data";
    const response = await call("POST", `/api/v1/workspaces/${alice.workspaceId}/workflows`, {
      name: "Broken",
      state: broken,
    });
    expect(response.status).toBe(400);
    expect(response.headers["content-type"]).toBe("application/problem+json");
    expect(response.json).toMatchObject({
      status: 400,
      code: "invalid_argument",
      errors: [
        { field: "state.blocks.api.config.url", message: expect.stringContaining("is not closed with >") },
        { field: "state.edges[2].target", message: "edge 2: target nowhere is no block, loop or parallel" },
      ],
    });
  });

  it("an update is validated the same way, and a refused one saves no version", async () => {
    const workflow = await createOverRest("Guarded");
    const broken = state();
    broken.blocks.start.type = "trigger";
    const response = await call("PUT", `/api/v1/workflows/${workflow.id}`, { state: broken });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({
      errors: [{ field: "state.blocks" }, { field: "state.blocks.start.type" }],
    });
    expect((await flowlog.store.workflows.getWorkflow(workflow.id))?.version).toBe(1);
  });

  it("text holding a NUL character is refused by its field, in either store; JSON values may hold one (D32)", async () => {
    const named = state();
    (named.blocks.start as Json).name = "St\u0000art";
    const refused = await call("POST", `/api/v1/workspaces/${alice.workspaceId}/workflows`, {
      name: "Nul\u0000name",
      state: named,
    });
    expect(refused.status).toBe(400);
    expect((refused.json as { errors: Json[] }).errors).toEqual([
      { field: "name", message: "name must not contain the NUL character (U+0000)" },
      {
        field: "state.blocks.start.name",
        message: "state.blocks.start.name must not contain the NUL character (U+0000)",
      },
    ]);

    const configured = state();
    (configured.blocks.done.config as Json).data = "a\u0000b";
    const saved = await createOverRest("NUL in a JSON value", { state: configured });
    const read = await call("GET", `/api/v1/workflows/${saved.id}`);
    expect(
      ((read.json as { workflow: WorkflowJson }).workflow.state as { blocks: { done: { config: Json } } })
        .blocks.done.config.data,
    ).toBe("a\u0000b");
  });

  it("name and state are required on create", async () => {
    const response = await call("POST", `/api/v1/workspaces/${alice.workspaceId}/workflows`, {});
    expect(response.status).toBe(400);
    expect((response.json as { errors: Json[] }).errors.map((e) => e.field)).toEqual(["name", "state"]);
  });

  it("over Connect, the same violations arrive as google.rpc.BadRequest details", async () => {
    const error = await rpcError(() =>
      connectClient(alice.key).createWorkflow({
        workspaceId: alice.workspaceId,
        name: "Broken",
        state: { blocks: {}, edges: [{ source: "ghost", target: "api" }] },
      }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    const violations = error.findDetails(BadRequestSchema).flatMap((d) => d.fieldViolations);
    expect(violations.map((v) => v.field)).toEqual([
      "state.blocks",
      "state.edges[0].source",
      "state.edges[0].target",
    ]);
  });
});

describe("the same RPCs over Connect and gRPC", () => {
  it("create, update, get, list and delete round-trip over both protocols", async () => {
    const grpc = createClient(WorkflowsService, createGrpcTransport({ baseUrl: flowlog.server.url }));
    const headers = { "x-api-key": alice.key };
    for (const [protocol, client, options] of [
      ["Connect", connectClient(alice.key), {}],
      ["gRPC", grpc, { headers }],
    ] as const) {
      const blocks = {
        start: { type: "starter", name: "Start" },
        reply: { type: "response", name: "Reply", config: { data: { ok: true } } },
      };
      const edges = [{ source: "start", target: "reply" }];
      const { workflow } = await client.createWorkflow(
        { workspaceId: alice.workspaceId, name: `Over ${protocol}`, state: { blocks, edges } },
        options,
      );
      expect(workflow?.version, protocol).toBe(1);
      const id = workflow?.id ?? "";
      const updated = await client.updateWorkflow({ id, description: "now described" }, options);
      expect(updated.workflow?.version, protocol).toBe(2);
      const read = await client.getWorkflow({ id }, options);
      expect(read.workflow?.description, protocol).toBe("now described");
      expect(read.workflow?.state?.blocks.reply?.config, protocol).toEqual({ data: { ok: true } });
      const listed = await client.listWorkflows({ workspaceId: alice.workspaceId }, options);
      expect(
        listed.workflows.map((w) => w.id),
        protocol,
      ).toContain(id);
      await client.deleteWorkflow({ id }, options);
      expect((await rpcError(() => client.getWorkflow({ id }, options))).code, protocol).toBe(Code.NotFound);
    }
  });
});

describe("isolation between workspaces (D10)", () => {
  it("a workspace the caller is not a member of is 403 on list and create, existing or not", async () => {
    for (const workspaceId of [alice.workspaceId, "ws_does_not_exist"]) {
      const list = await call("GET", `/api/v1/workspaces/${workspaceId}/workflows`, undefined, bob.key);
      expect(list.status).toBe(403);
      expect(list.json).toMatchObject({
        code: "permission_denied",
        detail: `no access to workspace ${workspaceId}`,
      });
      const create = await call(
        "POST",
        `/api/v1/workspaces/${workspaceId}/workflows`,
        { name: "x", state: state() },
        bob.key,
      );
      expect(create.status).toBe(403);
      const folders = await call("GET", `/api/v1/workspaces/${workspaceId}/folders`, undefined, bob.key);
      expect(folders.status).toBe(403);
    }
  });

  it("another workspace's workflow is 404 on get, update and delete, exactly like a missing one", async () => {
    const workflow = await createOverRest("Alice's own");
    for (const id of [workflow.id, "wf_does_not_exist"]) {
      for (const [method, body] of [["GET"], ["PUT", { name: "taken" }], ["DELETE"]] as const) {
        const response = await call(method, `/api/v1/workflows/${id}`, body, bob.key);
        expect(response.status, `${method} ${id}`).toBe(404);
        expect(response.json).toMatchObject({ code: "not_found", detail: `workflow ${id} not found` });
      }
    }
    expect(await flowlog.store.workflows.getWorkflow(workflow.id)).toMatchObject({
      name: "Alice's own",
      deletedAt: null,
    });
  });

  it("without a key, nothing is answered but 401", async () => {
    const response = await rest(flowlog.server.url, `/api/v1/workspaces/${alice.workspaceId}/workflows`);
    expect(response.status).toBe(401);
  });
});
