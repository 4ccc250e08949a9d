import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../src/store/store.js";
import { createAccount, createWorkflow, execution, type TestAccount } from "./support/flowlog.js";
import { type ServeProcess, startServeProcess } from "./support/serve-process.js";

/**
 * Issue 50: `flowlog serve|worker|dev` run the JavaScript that scripts/build.mjs compiled into dist/js/, not
 * the sources through tsx. The modules that find their way by their own location (the stats thread's module,
 * the workflow bundle, the OpenAPI document, the console) are the ones a build can break: this runs them from
 * the build.
 */

const repoRoot = path.resolve(import.meta.dirname, "..");

let serve: ServeProcess;
let store: Store;
let account: TestAccount;

beforeAll(async () => {
  serve = await startServeProcess();
  store = openStore({ dataDir: serve.dataDir });
  account = await createAccount(store, "enterprise");
  const workflowId = await createWorkflow(store, account.workspaceId);
  await store.logs.insertExecutions([
    execution(account, workflowId),
    execution(account, workflowId, { level: "error" }),
  ]);
});
afterAll(async () => {
  await store?.close();
  await serve?.stop();
});

const get = (route: string) => fetch(new URL(route, serve.url), { headers: { "x-api-key": account.key } });

describe("the compiled build (issue 50)", () => {
  it("is what flowlog serve runs, with source maps that lead back to the TypeScript", () => {
    const cmdline = readFileSync(`/proc/${serve.pid}/cmdline`, "utf8").split("\0");
    expect(cmdline).toContain("bin/flowlog.js");
    const compiledMain = path.join(repoRoot, "dist/js/src/cli/main.js");
    expect(readFileSync(compiledMain, "utf8")).not.toMatch(/: (string|number|Promise<)/);
    expect(JSON.parse(readFileSync(`${compiledMain}.map`, "utf8")).sources).toEqual([
      "../../../../src/cli/main.ts",
    ]);
    // The workers' workflow code, bundled once by the build (the cluster test runs workflows on it).
    expect(existsSync(path.join(repoRoot, "dist/js/src/temporal/workflow-bundle.js"))).toBe(true);
  });

  it("answers the log stats from its stats thread, which loads the compiled worker module", async () => {
    const response = await get(
      `/api/v1/log-stats?workspaceId=${account.workspaceId}&startDate=2026-11-01T10:00:00Z&endDate=2026-11-01T11:00:00Z`,
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as { hours: { executions: number; errors: number }[] };
    expect(body.hours[0]).toMatchObject({ executions: 2, errors: 1 });
  });

  it("serves the OpenAPI document and the console from the repository, not from beside dist/js/", async () => {
    const document = await fetch(new URL("/api/v1/openapi.json", serve.url));
    expect(document.status).toBe(200);
    expect(await document.text()).toBe(
      readFileSync(path.join(repoRoot, "gen/openapi/flowlog.openapi.json"), "utf8"),
    );
    const page = await fetch(serve.url);
    expect(page.status).toBe(200);
    const script = /src="(\/console\/app-[^"]+\.js)"/.exec(await page.text())?.[1];
    expect((await fetch(new URL(script as string, serve.url))).status).toBe(200);
  });
});
