import { type Command, InvalidArgumentError } from "commander";

/**
 * The cluster's code (Temporal's client and protos among it) loads when a cluster command runs: every other
 * command, `--help` included, starts without it.
 */
const clusterCode = () => import("../cluster/cluster.js");

interface UpOptions {
  dir: string;
  port: number;
  temporalPort: number;
  uiPort: number;
  replicas: number;
  executionWorkers: number;
  deliveryWorkers: number;
}

/**
 * `flowlog cluster up|down|status|purge` (issue 16, D32): the reference deployment on one machine, for
 * trying the several-process path before building it on several machines (docs/deploy.md).
 */
export function registerClusterCommand(program: Command): void {
  const cluster = program
    .command("cluster")
    .description(
      "the reference cluster on this machine: PostgreSQL, a Temporal server and its UI, flowlog serve and " +
        "worker replicas, nginx in front (docs/deploy.md)",
    );
  const dirOption = [
    "--dir <path>",
    "where the cluster keeps its data, logs and settings",
    ".cluster",
  ] as const;

  cluster
    .command("up")
    .description(
      "start every part (installing and building what is missing) and print where each one answers",
    )
    .option(...dirOption)
    .option("--port <n>", "nginx's port: REST, Connect, gRPC-Web and gRPC", port, 8080)
    .option("--temporal-port <n>", "the Temporal frontend's gRPC port", port, 7233)
    .option("--ui-port <n>", "the Temporal Web UI's port", port, 8233)
    .option("--replicas <n>", "flowlog serve processes", positiveWhole, 2)
    .option("--execution-workers <n>", "flowlog worker processes running executions", positiveWhole, 1)
    .option("--delivery-workers <n>", "flowlog worker processes running deliveries", positiveWhole, 1)
    .action(
      reporting("up", async ({ executionWorkers, deliveryWorkers, ...options }: UpOptions) => {
        const [{ loadDotEnv }, { maskPassword }] = await Promise.all([
          import("../config/config.js"),
          import("../store/postgres/database.js"),
        ]);
        loadDotEnv();
        const workers = { executions: executionWorkers, deliveries: deliveryWorkers };
        const { clusterUp } = await clusterCode();
        const up = await clusterUp({ ...options, workers, env: process.env });
        console.log(`flowlog cluster is up (${options.dir}):
  API (REST, Connect, gRPC-Web; gRPC over h2c)  ${up.apiUrl}   grpcurl -plaintext ${up.grpcAddress} list
  flowlog serve replicas                        ${up.serveUrls.join("  ")}   (/healthz /readyz /metrics)
  flowlog worker, executions                    ${up.workerUrls.executions.join("  ")}   (/healthz /readyz /metrics)
  flowlog worker, deliveries                    ${up.workerUrls.deliveries.join("  ")}   (/healthz /readyz /metrics)
  Temporal frontend                             ${up.temporalAddress}
  Temporal Web UI                               ${up.temporalUiUrl}
  Temporal server metrics                       ${up.temporalMetricsUrl}
  PostgreSQL (flowlog's store)                  ${maskPassword(up.databaseUrl)}

A key for the API: the CLI works on the cluster's store with the settings in ${up.envFile}:
  (set -a; . ${up.envFile}; npm run flowlog -- bootstrap)
Logs are in ${options.dir}/logs; \`flowlog cluster status\` checks every part, \`flowlog cluster down\` stops them.`);
      }),
    );

  cluster
    .command("status")
    .description("each started process: running, and ready by its probe")
    .option(...dirOption)
    .action(
      reporting("status", async (options: { dir: string }) => {
        const { clusterStatus } = await clusterCode();
        const processes = await clusterStatus(options.dir);
        if (processes.length === 0) {
          console.log(`no cluster is up in ${options.dir}`);
          return;
        }
        for (const p of processes) {
          const state = !p.running ? "stopped" : p.ready === false ? "running, not ready" : "running";
          console.log(`${p.name.padEnd(18)} pid ${String(p.pid).padEnd(8)} ${state.padEnd(20)} ${p.log}`);
        }
        if (processes.some((p) => !p.running || p.ready === false)) process.exitCode = 1;
      }),
    );

  cluster
    .command("down")
    .description("stop every process the cluster started, and nothing else; its data stays")
    .option(...dirOption)
    .action(
      reporting("down", async (options: { dir: string }) => {
        const { clusterDown } = await clusterCode();
        const stopped = await clusterDown(options.dir);
        console.log(stopped.length === 0 ? "nothing was running" : `stopped ${stopped.join(", ")}`);
      }),
    );

  cluster
    .command("purge")
    .description("delete a stopped cluster's directory: its databases, master key and logs")
    .option(...dirOption)
    .action(
      reporting("purge", async (options: { dir: string }) => {
        const { clusterPurge } = await clusterCode();
        await clusterPurge(options.dir);
        console.log(`deleted ${options.dir}`);
      }),
    );
}

/**
 * A refusal (a directory the cluster cannot trust) or a part that would not start says why in one
 * message, with its log's end; no stack trace.
 */
function reporting<O>(command: string, action: (options: O) => Promise<void>): (options: O) => Promise<void> {
  return (options) =>
    action(options).catch((error: unknown) => {
      console.error(`flowlog cluster ${command}: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    });
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new InvalidArgumentError("must be a port from 1 to 65535");
  return n;
}

function positiveWhole(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 16)
    throw new InvalidArgumentError("must be a whole number from 1 to 16");
  return n;
}
