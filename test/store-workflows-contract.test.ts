import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PostgresWorkflowsStore } from "../src/store/postgres/workflows-store.js";
import type { WorkflowRecord } from "../src/store/records.js";
import type { StoreArea } from "../src/store/store.js";
import { WorkflowsStore } from "../src/store/workflows-store.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import { type ContractDatabase, storeKinds } from "./support/store-kinds.js";

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

type Workflows = StoreArea<WorkflowsStore>;

const kinds = storeKinds<Workflows>(
  { sqlite: (db) => new WorkflowsStore(db), postgres: (pool) => new PostgresWorkflowsStore(pool) },
  () => server,
);

const t0 = Date.parse("2026-11-01T10:00:00.000Z");
const workspaceId = "ws_workflows";

function workflow(id: string, name: string, folderId: string | null = null): WorkflowRecord {
  return {
    id,
    workspaceId,
    folderId,
    name,
    description: `${name}, for the contract`,
    version: 1,
    state: { blocks: { start: { type: "starter" } }, edges: [] },
    createdAt: t0,
    updatedAt: t0,
  };
}

describe.each(kinds)("folders and workflow versions on %s (D13, D32)", (_, open) => {
  let db: ContractDatabase<Workflows>;
  let workflows: Workflows;
  beforeEach(async () => {
    db = await open();
    workflows = db.areas;
    await db.query("INSERT INTO workspaces (id, name, created_at) VALUES (@workspaceId, 'Contract', 0)", {
      workspaceId,
    });
  });
  afterEach(() => db.close());

  it("lists folders by name, in byte order whatever the server's locale", async () => {
    for (const [id, name] of [
      ["fld_1", "b reports"],
      ["fld_2", "B reports"],
      ["fld_3", "a-sync"],
    ] as const) {
      await workflows.createFolder({ id, workspaceId, name, createdAt: t0 });
    }
    expect(await workflows.getFolder("fld_2")).toEqual({
      id: "fld_2",
      workspaceId,
      name: "B reports",
      createdAt: t0,
    });
    expect(await workflows.getFolder("fld_missing")).toBeUndefined();
    expect((await workflows.listFolders(workspaceId)).map((f) => f.name)).toEqual([
      "B reports",
      "a-sync",
      "b reports",
    ]);
  });

  it("an update saves the next version and keeps every earlier one readable", async () => {
    await workflows.createFolder({ id: "fld_1", workspaceId, name: "Reports", createdAt: t0 });
    await workflows.createWorkflow(workflow("wf_1", "Nightly", "fld_1"));
    const state = { blocks: { start: { type: "starter" }, done: { type: "response" } }, edges: [] };
    const updated = await workflows.updateWorkflow(
      "wf_1",
      { name: "Nightly v2", folderId: null, state },
      t0 + 10,
    );
    expect(updated).toMatchObject({
      version: 2,
      name: "Nightly v2",
      folderId: null,
      state,
      updatedAt: t0 + 10,
    });
    expect(await workflows.getWorkflow("wf_1")).toEqual({ ...updated, deletedAt: null });
    expect(await workflows.getWorkflowVersion("wf_1", 1)).toMatchObject({
      version: 1,
      name: "Nightly",
      state: workflow("wf_1", "Nightly").state,
      createdAt: t0,
    });
    expect(await workflows.getWorkflowVersion("wf_1", 2)).toMatchObject({
      version: 2,
      state,
      createdAt: t0 + 10,
    });
    expect(await workflows.getWorkflowVersion("wf_1", 3)).toBeUndefined();
    // A change left out keeps its value.
    expect(await workflows.updateWorkflow("wf_1", { description: "kept name" }, t0 + 20)).toMatchObject({
      version: 3,
      name: "Nightly v2",
      description: "kept name",
    });
  });

  it("a deleted workflow is kept for its logs but no longer listed or updated", async () => {
    await workflows.createFolder({ id: "fld_1", workspaceId, name: "Reports", createdAt: t0 });
    await workflows.createWorkflow(workflow("wf_b", "Beta", "fld_1"));
    await workflows.createWorkflow(workflow("wf_a", "Alpha"));
    await workflows.createWorkflow(workflow("wf_c", "Gamma", "fld_1"));
    expect((await workflows.listWorkflows(workspaceId)).map((w) => w.id)).toEqual(["wf_a", "wf_b", "wf_c"]);
    expect((await workflows.listWorkflows(workspaceId, "fld_1")).map((w) => w.id)).toEqual(["wf_b", "wf_c"]);
    expect(await workflows.deleteWorkflow("wf_b", t0 + 5)).toBe(true);
    expect(await workflows.deleteWorkflow("wf_b", t0 + 6)).toBe(false);
    expect(await workflows.deleteWorkflow("wf_missing", t0 + 6)).toBe(false);
    expect((await workflows.listWorkflows(workspaceId, "fld_1")).map((w) => w.id)).toEqual(["wf_c"]);
    expect(await workflows.getWorkflow("wf_b")).toMatchObject({ deletedAt: t0 + 5, version: 1 });
    // The logs API still names it (issue 13: names without the graph); unknown ids are left out.
    const summaries = await workflows.getWorkflowSummaries(["wf_b", "wf_a", "wf_missing", "wf_a"]);
    expect(summaries.sort((x, y) => x.id.localeCompare(y.id))).toEqual([
      { id: "wf_a", name: "Alpha", description: "Alpha, for the contract" },
      { id: "wf_b", name: "Beta", description: "Beta, for the contract" },
    ]);
    expect(await workflows.getWorkflowSummaries([])).toEqual([]);
    expect(await workflows.updateWorkflow("wf_b", { name: "Back" }, t0 + 7)).toBeUndefined();
    expect(await workflows.updateWorkflow("wf_missing", { name: "Never" }, t0 + 7)).toBeUndefined();
  });

  it("updates from two connections at once take turns: every version number is written once", async () => {
    await workflows.createWorkflow(workflow("wf_1", "Contended"));
    const other = await db.connect();
    const rounds = 12;
    const saved = await Promise.all(
      Array.from({ length: rounds * 2 }, (_, n) =>
        (n % 2 ? other : workflows).updateWorkflow("wf_1", { description: `update ${n}` }, t0 + n),
      ),
    );
    const versions = saved.map((w) => w?.version).sort((a, b) => (a ?? 0) - (b ?? 0));
    expect(versions).toEqual(Array.from({ length: rounds * 2 }, (_, n) => n + 2));
    expect(await workflows.getWorkflow("wf_1")).toMatchObject({ version: rounds * 2 + 1 });
    const stored = await db.query<{ n: number }>(
      "SELECT count(*) AS n FROM workflow_versions WHERE workflow_id = 'wf_1'",
    );
    expect(Number(stored[0]?.n)).toBe(rounds * 2 + 1);
  });

  describe("a workflow's head, read without its graph (issue 49)", () => {
    beforeEach(async () => {
      await workflows.createFolder({ id: "fld_1", workspaceId, name: "Reports", createdAt: t0 });
      await workflows.createWorkflow(workflow("wf_1", "Nightly"));
    });

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
});
