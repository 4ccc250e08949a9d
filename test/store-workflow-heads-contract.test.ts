import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PostgresWorkflowsStore } from "../src/store/postgres/workflows-store.js";
import type { StoreArea } from "../src/store/store.js";
import { WorkflowsStore } from "../src/store/workflows-store.js";
import { type PostgresServer, startPostgres } from "./support/postgres.js";
import { type ContractDatabase, storeKinds } from "./support/store-kinds.js";

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(() => server.stop());

type Workflows = StoreArea<WorkflowsStore>;

const kinds = storeKinds<Workflows>(
  { sqlite: (db) => new WorkflowsStore(db), postgres: (pool) => new PostgresWorkflowsStore(pool) },
  () => server,
);

const t0 = Date.parse("2026-11-01T10:00:00.000Z");
const workspaceId = "ws_heads";

describe.each(kinds)("a workflow's head, read without its graph, on %s (issue 49, D32)", (_, open) => {
  let db: ContractDatabase<Workflows>;
  let workflows: Workflows;
  beforeEach(async () => {
    db = await open();
    workflows = db.areas;
    await db.query("INSERT INTO workspaces (id, name, created_at) VALUES (@workspaceId, 'Contract', 0)", {
      workspaceId,
    });
    await workflows.createFolder({ id: "fld_1", workspaceId, name: "Reports", createdAt: t0 });
    await workflows.createWorkflow({
      id: "wf_1",
      workspaceId,
      folderId: null,
      name: "Nightly",
      description: "",
      version: 1,
      state: { blocks: { start: { type: "starter" } }, edges: [] },
      createdAt: t0,
      updatedAt: t0,
    });
  });
  afterEach(() => db.close());

  it("names the workspace, the folder and the current version, moved and saved since", async () => {
    expect(await workflows.getWorkflowHead("wf_1")).toEqual({
      id: "wf_1",
      workspaceId,
      folderId: null,
      version: 1,
      deletedAt: null,
    });
    await workflows.updateWorkflow("wf_1", { folderId: "fld_1", description: "moved" }, t0 + 10);

    expect(await workflows.getWorkflowHead("wf_1")).toEqual({
      id: "wf_1",
      workspaceId,
      folderId: "fld_1",
      version: 2,
      deletedAt: null,
    });
  });

  it("keeps a deleted workflow's head, with when it was deleted; an unknown id has none", async () => {
    await workflows.deleteWorkflow("wf_1", t0 + 5);

    expect(await workflows.getWorkflowHead("wf_1")).toMatchObject({ version: 1, deletedAt: t0 + 5 });
    expect(await workflows.getWorkflowHead("wf_missing")).toBeUndefined();
  });
});
