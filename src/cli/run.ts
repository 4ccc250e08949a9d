import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Command } from "commander";
import type { UserRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { type CommandContext, withContext } from "./context.js";

interface RunOptions {
  input?: string;
  user?: string;
  async?: boolean;
}

/**
 * `flowlog run <workflowId>`: the manual trigger (D15). It runs the workflow's current version on
 * Temporal for a member of its workspace (the first member unless --user names one), admitted against
 * that user's plan like every trigger (D12), and prints the outcome as JSON.
 */
export function registerRunCommand(
  program: Command,
  openContext: () => CommandContext | Promise<CommandContext>,
): void {
  program
    .command("run")
    .description("run a workflow now (trigger: manual) and print its outcome")
    .argument("<workflowId>", "the workflow to run")
    .option("--input <json>", "JSON handed to the starter block")
    .option("--user <userId>", "whose execution it is (default: the workspace's first member)")
    .option("--async", "print the executionId at once instead of waiting for the outcome")
    .action((workflowId: string, options: RunOptions) =>
      withContext(openContext, async ({ config, store }) => {
        // Temporal's client and the trigger path load only when a workflow runs, not for every command.
        const [{ runWorkflow }, { lazyTemporalClient }] = await Promise.all([
          import("../services/triggers/executions.js"),
          import("../temporal/client.js"),
        ]);
        const temporal = lazyTemporalClient(
          config.temporalAddress ?? "localhost:7233",
          config.temporalNamespace,
        );
        try {
          const run = await runWorkflow(
            {
              store,
              planLimits: config.planLimits,
              quotas: config.quotas,
              temporal,
              taskQueue: config.taskQueue,
              clock: Date.now,
            },
            {
              caller: { user: await runningUser(store, workflowId, options.user) },
              workflowId,
              trigger: "manual",
              mode: options.async ? "async" : "sync",
              input:
                options.input === undefined ? undefined : fromJson(ValueSchema, parseInput(options.input)),
            },
          );
          const { result } = run;
          const outcome = result && {
            status: result.status,
            httpStatus: result.httpStatus,
            output: result.httpBody,
          };
          console.log(JSON.stringify({ executionId: run.executionId, ...outcome }));
        } finally {
          await temporal.connection.close();
        }
      }),
    );
}

async function runningUser(
  store: Store,
  workflowId: string,
  userId: string | undefined,
): Promise<UserRecord> {
  const workflow = await store.workflows.getWorkflow(workflowId);
  const id = userId ?? (workflow ? (await store.accounts.membersOf(workflow.workspaceId))[0] : undefined);
  const user = id === undefined ? undefined : await store.accounts.getUser(id);
  if (!user) {
    const what = userId === undefined ? `workflow ${workflowId} not found` : `user ${userId} not found`;
    throw new ConnectError(what, Code.NotFound);
  }
  return user;
}

function parseInput(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw new ConnectError("--input must be JSON", Code.InvalidArgument);
  }
}
