import { fileURLToPath } from "node:url";
import { bundleWorkflowCode, DefaultLogger } from "@temporalio/worker";
import { describe, expect, it } from "vitest";

/**
 * Every workflow evaluates its bundle's imports afresh, so what workflow code imports is paid on each
 * execution. The execution bench found the Temporal API protos loaded this way (through the search
 * attribute keys) costing about 12 ms of worker CPU per execution; they belong to clients only.
 */
describe("The workflow bundle (issue 7: the execution bench)", () => {
  it("leaves out the Temporal API protos and the SQLite driver", async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL("../src/temporal/workflows/index.ts", import.meta.url)),
      logger: new DefaultLogger("ERROR"),
    });
    expect(code).toContain("executeWorkflow");
    expect(code).not.toContain("@temporalio/proto/protos/json-module");
    expect(code).not.toContain("better-sqlite3");
  }, 60_000);
});
