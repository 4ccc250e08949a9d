import { AgentBlockError, type AgentProvider, runAgentBlock as callAgent } from "../../blocks/agent.js";
import {
  type HttpRequestConfig,
  HttpRequestConfigError,
  runHttpRequest,
  secretHeaderNames,
} from "../../blocks/http-request.js";
import { defaultQuotas } from "../../config/quotas.js";
import type { AgentOutput, ApiOutput, BlockOutcome, BlockRequest } from "../../engine/execution-types.js";
import { findReferences, ReferenceResolutionError, resolveReferences } from "../../engine/references.js";
import { createRedactor } from "../../outbound/redaction.js";
import { SecretDecryptionError } from "../../security/secrets.js";
import { ownValue } from "../../util/own-property.js";
import { BlockAdmission } from "./block-admission.js";
import type { ActivityDeps } from "./deps.js";
import { heartbeating } from "./heartbeating.js";

/**
 * The blocks with side effects (D13), one activity each. Only here do `{{NAME}}` references meet their
 * values (D24): the workflow hands over the config as written, and everything handed back has the values
 * of the variables used replaced by `[redacted]`, encoded forms included, so an API that echoes a token
 * leaks it into neither Temporal history nor the log. A block's own failures are outcomes, never thrown:
 * Temporal retries only what the block could not report (its worker died, the database was locked) and a
 * busy workspace (block-admission.ts).
 */
export function blockActivities(deps: ActivityDeps) {
  const quotas = deps.quotas ?? defaultQuotas;
  const admission = new BlockAdmission(quotas.workspace.concurrentBlockActivities);
  return {
    runApiBlock(request: BlockRequest): Promise<BlockOutcome<ApiOutput>> {
      return admission.run(request.workspaceId, (beat) =>
        withSecrets(deps, request, [], async (config) => {
          const { data, status, headers, error, attempts } = await heartbeating(beat, (context) =>
            runHttpRequest(config as HttpRequestConfig, {
              allowPrivateNetworks: deps.allowPrivateNetworks,
              quotas,
              secretHeaders: secretHeaderNames(request.config, config as HttpRequestConfig),
              signal: context.cancellationSignal,
              sleep: (ms) => context.sleep(ms),
              onAttempt: beat,
            }),
          );
          const output = { data, status, headers, error, attempts };
          return error === null ? { output } : { output, error };
        }),
      );
    },

    runAgentBlock(request: BlockRequest): Promise<BlockOutcome<AgentOutput>> {
      return admission.run(request.workspaceId, (beat) =>
        withSecrets(deps, request, [agentKeyVariable], async (config, env) => {
          const output = await heartbeating(beat, (context) =>
            callAgent(config, agentProvider(env), {
              allowPrivateNetworks: deps.allowPrivateNetworks,
              replyLimitBytes: quotas.replyBytes.block,
              signal: context.cancellationSignal,
              sleep: (ms) => context.sleep(ms),
              ...(deps.prices ? { prices: deps.prices } : {}),
            }),
          );
          return { output };
        }),
      );
    },
  };
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

/** Failures the block reports as its error; anything else is the worker's problem, for Temporal to retry. */
const blockErrors = [
  ReferenceResolutionError,
  HttpRequestConfigError,
  AgentBlockError,
  SecretDecryptionError,
];

async function withSecrets<Output>(
  deps: ActivityDeps,
  request: BlockRequest,
  alsoSecret: string[],
  run: (config: unknown, env: Record<string, string>) => Promise<BlockOutcome<Output>>,
): Promise<BlockOutcome<Output>> {
  let outcome: BlockOutcome<Output>;
  let env: Record<string, string> = {};
  try {
    env = await deps.store.environment.getDecrypted(request.workspaceId);
    outcome = await run(resolveReferences(request.config, { outputs: request.outputs, env }), env);
  } catch (error) {
    if (!blockErrors.some((kind) => error instanceof kind)) throw error;
    const message = (error as Error).message;
    outcome = { output: { error: message }, error: message };
  }
  const used = [...findReferences(request.config).env, ...alsoSecret].map((name) => ownValue(env, name));
  return createRedactor(used).value(outcome);
}
