import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { clusterDown, clusterEnv, clusterStatus, clusterUp } from "../../src/cluster/cluster.js";
import { freeListeningPort, freeTemporalPort } from "../../src/util/free-port.js";
import { type FlowlogStack, poster } from "./flowlog-stack.js";
import { bootstrapAccount, unlimitedPlanLimits } from "./processes.js";

export interface ClusterStack extends FlowlogStack {
  /** What `flowlog` commands need to work on the cluster's store. */
  env: Record<string, string>;
  /** Stops one process of the cluster by its name (`flowlog-serve-2`), as its supervisor would. */
  stopPart(name: string): Promise<void>;
  /** `flowlog cluster up` again: starts what was stopped. */
  restartStopped(): Promise<void>;
}

/**
 * `flowlog cluster up` (issue 16) in a temporary directory on free ports, with the benches' raised limits
 * and loopback receivers allowed, and an enterprise account; the API is nginx's one port.
 */
export async function startClusterStack(): Promise<ClusterStack> {
  const dir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-cluster-"));
  // PostgreSQL runs as its own account and must reach its data inside.
  chmodSync(dir, 0o755);
  const options = {
    dir,
    port: await freeListeningPort(),
    temporalPort: await freeTemporalPort(),
    uiPort: await freeListeningPort(),
    replicas: 2,
    workers: { executions: 1, deliveries: 1 },
    env: {
      ...process.env,
      FLOWLOG_ALLOW_PRIVATE_NETWORKS: "true",
      FLOWLOG_PLAN_LIMITS: unlimitedPlanLimits,
      FLOWLOG_LOG_LEVEL: "warn",
    },
  };
  const up = await clusterUp(options).catch((error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  const stop = async () => {
    await clusterDown(dir);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const env = await clusterEnv(dir);
    const account = await bootstrapAccount({ ...env, FLOWLOG_PLAN_LIMITS: unlimitedPlanLimits });
    const api = up.apiUrl.replace("http://localhost", "127.0.0.1");
    return {
      api,
      temporalAddress: up.temporalAddress,
      key: account.key,
      workspaceId: account.workspaceId,
      auth: { "x-api-key": account.key },
      post: poster(api, account.key),
      addAccount: () => bootstrapAccount({ ...env, FLOWLOG_PLAN_LIMITS: unlimitedPlanLimits }),
      env,
      async stopPart(name) {
        const part = (await clusterStatus(dir)).find((p) => p.name === name);
        if (!part?.running) throw new Error(`no running ${name} in the cluster`);
        process.kill(part.pid, "SIGTERM");
        while ((await clusterStatus(dir)).find((p) => p.name === name)?.running) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      },
      restartStopped: async () => void (await clusterUp(options)),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
