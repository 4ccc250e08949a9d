import { Context } from "@temporalio/activity";
import { AgentBlockError, type AgentProvider, runAgentBlock as callAgent } from "../../blocks/agent.js";
import {
  type HttpRequestConfig,
  HttpRequestConfigError,
  runHttpRequest,
  secretHeaderNames,
} from "../../blocks/http-request.js";
import {
  type AgentOutput,
  type ApiOutput,
  type BlockOutcome,
  type BlockRequest,
  carriedOutputChars,
  type FirstTry,
  handOffFromStart,
} from "../../engine/execution-types.js";
import { findReferences, ReferenceResolutionError, resolveReferences } from "../../engine/references.js";
import { defaultQuotas } from "../../limits/quotas.js";
import { createRedactor } from "../../outbound/redaction.js";
import { SecretDecryptionError } from "../../security/secrets.js";
import { ownValue } from "../../util/own-property.js";
import { executionIdOf } from "../execution-ids.js";
import { attemptSlotLimits, maxFirstTries } from "../worker-slots.js";
import { BlockAdmission } from "./block-admission.js";
import { inBlockSpan, recordAgentOutcome, recordApiTry } from "./block-spans.js";
import type { ActivityDeps } from "./deps.js";
import { heartbeating } from "./heartbeating.js";

/**
 * The blocks with side effects (D13), one activity each, the HTTP block's first attempt a local activity
 * before it (issue 12). Only here do `{{NAME}}` references meet their
 * values (D24): the workflow hands over the config as written, and everything handed back has the values
 * of the variables used replaced by `[redacted]`, encoded forms included, so an API that echoes a token
 * leaks it into neither Temporal history nor the log. A block's own failures are outcomes, never thrown:
 * Temporal retries only what the block could not report (its worker died, the database was locked) and a
 * busy workspace (block-admission.ts).
 */
export function blockActivities(deps: ActivityDeps, stopping: AbortSignal) {
  const quotas = deps.quotas ?? defaultQuotas;
  const admission = new BlockAdmission(
    attemptSlotLimits(quotas, quotas.workspace.concurrentBlockActivities, "executions"),
  );
  let firstTries = 0;
  const carrying = new FirstTriesCarrying();
  /** The block's attempts, from its resume point on; a first try hands off where a retry would wait. */
  const apiAttempts = (
    request: BlockRequest,
    { signal, sleep }: Pick<Context, "sleep"> & { signal: AbortSignal },
    beat: () => void,
    firstTry: boolean,
  ) =>
    inBlockSpan("api", request, executionOfActivity(), async (span) => {
      const tried = await withSecrets(
        deps,
        request,
        [],
        async (config): Promise<FirstTry<ApiOutput>> => {
          const { data, status, headers, error, attempts, handedOff } = await runHttpRequest(
            config as HttpRequestConfig,
            {
              allowPrivateNetworks: deps.allowPrivateNetworks,
              quotas,
              secretHeaders: secretHeaderNames(request.config, config as HttpRequestConfig),
              signal,
              sleep,
              onAttempt: beat,
              handOffRetries: firstTry,
              resume: request.resume,
            },
          );
          if (handedOff) return { handOff: { ...handedOff, startedBefore: 0 } };
          const output = { data, status, headers, error, attempts };
          const outcome = error === null ? { output } : { output, error };
          return {
            outcome: carried(outcome, quotas.blockOutputBytes, (tooBig) => ({
              ...output,
              data: null,
              error: tooBig,
            })),
          };
        },
        (outcome): FirstTry<ApiOutput> => ({ outcome }),
      );
      recordApiTry(span, tried);
      return tried;
    });
  return {
    /**
     * Issue 12: the HTTP block's first attempt, as a local activity within the execution's own workflow
     * task, so that a block answered at once costs no activity task. Anything longer is the block
     * activity's: a retry to wait for, or a workspace at its D26 limit on this worker, is handed over to
     * runApiBlock, which waits in Temporal, heartbeats and shows as a pending activity in the Web UI.
     */
    async tryApiBlock(request: BlockRequest): Promise<FirstTry<ApiOutput>> {
      const context = Context.current();
      // Local activities do not heartbeat: a lost worker is noticed by its workflow task's timeout. A
      // stopping worker ends its first tries itself and hands them over; the Temporal SDK would otherwise
      // keep the workflow task, and the worker, waiting on them.
      const signal = AbortSignal.any([context.cancellationSignal, stopping]);
      const sleep = (ms: number) => context.sleep(ms);
      const lost = { handOff: handOffFromStart(1) };
      const notTried = { handOff: handOffFromStart(0) };
      if (firstTries >= maxFirstTries) return notTried;
      firstTries++;
      const runId = context.info.workflowExecution?.runId ?? "";
      const run = carrying.begin(runId);
      try {
        const tried = await admission
          .tryRun(request.workspaceId, () => apiAttempts(request, { signal, sleep }, () => {}, true))
          .catch((error: unknown) => {
            if (stopping.aborted && !context.cancellationSignal.aborted) return lost;
            throw error;
          });
        // The stop cuts an attempt in flight short, and the block reports it as a failed request: it was
        // not the upstream's answer, so the block goes on elsewhere.
        if (tried && "outcome" in tried && tried.outcome.error !== undefined && stopping.aborted) return lost;
        if (!tried || !("outcome" in tried) || run.carries(tried.outcome)) return tried ?? notTried;
        // The local activity's id is its place in the workflow's order, the same when a failed workflow
        // task runs it again, which then parks it again under the same key.
        const key = await park(deps, `${runId}/${context.info.activityId}`, tried.outcome);
        return { handOff: { ...handOffFromStart(0), parked: key } };
      } finally {
        run.end();
        firstTries--;
      }
    },

    /**
     * Parks the outputs a block activity's request would carry, when they are too large for Temporal's
     * payloads: as a local activity, whose input stays on this worker. Returns their key.
     */
    async parkBlockInputs(outputs: Record<string, unknown>): Promise<string> {
      const { info } = Context.current();
      return park(deps, `${info.workflowExecution?.runId ?? ""}/inputs/${info.activityId}`, outputs);
    },

    async runApiBlock(parkedRequest: BlockRequest): Promise<BlockOutcome<ApiOutput>> {
      const restored = await withParkedInputs(deps, parkedRequest);
      if ("failed" in restored) return restored.failed;
      const { request } = restored;
      const parked = request.resume?.parked;
      if (parked !== undefined)
        return (await unpark<BlockOutcome<ApiOutput>>(deps, parked)) ?? gone("answer");
      return admission.run(
        request.workspaceId,
        async (beat) => {
          const tried = await heartbeating(beat, (context) =>
            apiAttempts(
              request,
              { signal: context.cancellationSignal, sleep: (ms) => context.sleep(ms) },
              beat,
              false,
            ),
          );
          if ("handOff" in tried)
            throw new Error("the block activity runs every attempt left; it hands none off");
          return tried.outcome;
        },
        request.resume?.startedBefore,
      );
    },

    async runAgentBlock(parkedRequest: BlockRequest): Promise<BlockOutcome<AgentOutput>> {
      const restored = await withParkedInputs(deps, parkedRequest);
      if ("failed" in restored) return restored.failed;
      const { request } = restored;
      return admission.run(request.workspaceId, (beat) =>
        inBlockSpan("agent", request, executionOfActivity(), async (span) => {
          const outcome = await withSecrets(
            deps,
            request,
            [agentKeyVariable],
            async (config, env): Promise<BlockOutcome<AgentOutput>> => {
              const output = await heartbeating(beat, (context) =>
                callAgent(config, agentProvider(env), {
                  allowPrivateNetworks: deps.allowPrivateNetworks,
                  replyLimitBytes: quotas.replyBytes.block,
                  signal: context.cancellationSignal,
                  sleep: (ms) => context.sleep(ms),
                  ...(deps.prices ? { prices: deps.prices } : {}),
                }),
              );
              return carried({ output }, quotas.blockOutputBytes, (tooBig) => ({ error: tooBig }));
            },
            (failed) => failed,
          );
          recordAgentOutcome(span, outcome);
          return outcome;
        }),
      );
    },
  };
}

/** The execution the running activity belongs to (its workflow's id names it). */
function executionOfActivity(): string {
  return executionIdOf(Context.current().info.workflowExecution?.workflowId ?? "");
}

/** The request with the outputs it references read back from the store, when they were parked. */
async function withParkedInputs(
  deps: ActivityDeps,
  request: BlockRequest,
): Promise<{ request: BlockRequest } | { failed: BlockOutcome<never> }> {
  if (request.parkedOutputs === undefined) return { request };
  const outputs = await unpark<Record<string, unknown>>(deps, request.parkedOutputs);
  return outputs === undefined ? { failed: gone("inputs") } : { request: { ...request, outputs } };
}

/** Parks a value as JSON under the running activity's execution and `key`; returns the key. */
async function park(deps: ActivityDeps, key: string, value: unknown): Promise<string> {
  await deps.store.parkedOutputs.park(executionOfActivity(), key, JSON.stringify(value), Date.now());
  return key;
}

/** The value parked under the running activity's execution and `key`, or undefined when it is gone. */
async function unpark<T>(deps: ActivityDeps, key: string): Promise<T | undefined> {
  const json = await deps.store.parkedOutputs.read(executionOfActivity(), key);
  return json === undefined ? undefined : (JSON.parse(json) as T);
}

/**
 * A parked value that is no longer there: released with the execution's entry, or swept after days. The
 * block fails; the API is never called a second time, nor called without what it references.
 */
function gone(what: "answer" | "inputs"): BlockOutcome<never> {
  const error =
    what === "answer"
      ? "the block's answer, parked while its execution ran, is no longer in the store"
      : "the outputs this block references, parked while its execution ran, are no longer in the store";
  return { output: { error }, error };
}

/**
 * How much output the first tries running at once for each execution bring back. Every first try that ends
 * within one workflow task travels in that task's completion, which Temporal refuses over 4 MiB (its gRPC
 * limit), and a refused completion failed the task and ran every first try again, for as long as the
 * execution lived: the branches of a parallel answering 900 KiB each at once did. Past `carriedOutputChars`
 * among the first tries in flight together, a first try's outcome is parked in the store instead (the first
 * one to end always travels, within blockOutputBytes). First tries one after another are bounded by the
 * workflow itself (execute-workflow.ts), and within one task they all run on this worker.
 */
class FirstTriesCarrying {
  private readonly runs = new Map<string, { inFlight: number; chars: number }>();

  begin(runId: string): { carries(outcome: BlockOutcome<unknown>): boolean; end(): void } {
    const run = this.runs.get(runId) ?? { inFlight: 0, chars: 0 };
    this.runs.set(runId, run);
    run.inFlight++;
    return {
      carries: (outcome) => {
        const chars = JSON.stringify(outcome.output ?? null).length;
        if (run.chars > 0 && run.chars + chars > carriedOutputChars) return false;
        run.chars += chars;
        return true;
      },
      end: () => {
        if (--run.inFlight === 0) this.runs.delete(runId);
      },
    };
  }
}

/**
 * The workspace's chat-completions provider for agent blocks (issue 4, item 4): two workspace environment
 * variables, so the key is stored encrypted like every other secret (D24).
 */
export const agentBaseUrlVariable = "AGENT_BASE_URL";
export const agentKeyVariable = "AGENT_API_KEY";
const defaultAgentBaseUrl = "https://api.openai.com";

function agentProvider(env: Record<string, string>): AgentProvider {
  return { baseUrl: env[agentBaseUrlVariable] ?? defaultAgentBaseUrl, apiKey: env[agentKeyVariable] ?? "" };
}

/**
 * What a block hands back travels through Temporal: the HTTP block's first try in its execution's workflow
 * task, a block activity's result as a payload of its own, and then the inputs of the blocks that read it.
 * Temporal's server refuses a payload over 2 MiB by default: it terminated the execution before its log
 * entry was written, and a workflow task over 4 MiB (its gRPC limit) failed and ran the first try again
 * for as long as the execution lived. D26 reads a reply up to 10 MiB; an output over `limit` as JSON
 * fails the block instead, naming the quota, and the execution goes on to its error path and its entry.
 */
function carried<Output>(
  outcome: BlockOutcome<Output>,
  limit: number,
  failedOutput: (error: string) => unknown,
): BlockOutcome<Output> {
  const bytes = Buffer.byteLength(JSON.stringify(outcome.output) ?? "");
  if (bytes <= limit) return outcome;
  const error = `block output is ${bytes} bytes as JSON, more than the ${limit} an execution carries (D26: FLOWLOG_QUOTAS blockOutputBytes)`;
  return { output: failedOutput(error), error };
}

/** Failures the block reports as its error; anything else is the worker's problem, for Temporal to retry. */
const blockErrors = [
  ReferenceResolutionError,
  HttpRequestConfigError,
  AgentBlockError,
  SecretDecryptionError,
];

async function withSecrets<Outcome>(
  deps: ActivityDeps,
  request: BlockRequest,
  alsoSecret: string[],
  run: (config: unknown, env: Record<string, string>) => Promise<Outcome>,
  failed: (outcome: BlockOutcome<never>) => Outcome,
): Promise<Outcome> {
  let outcome: Outcome;
  let env: Record<string, string> = {};
  try {
    env = await deps.store.environment.getDecrypted(request.workspaceId);
    outcome = await run(resolveReferences(request.config, { outputs: request.outputs, env }), env);
  } catch (error) {
    if (!blockErrors.some((kind) => error instanceof kind)) throw error;
    const message = (error as Error).message;
    outcome = failed({ output: { error: message }, error: message });
  }
  const used = [...findReferences(request.config).env, ...alsoSecret].map((name) => ownValue(env, name));
  return createRedactor(used).value(outcome);
}
