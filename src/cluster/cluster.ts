import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { appendFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Connection } from "@temporalio/client";
import pg from "pg";
import { resolvePostgresBinaries } from "../tools/postgres-binaries.js";
import {
  initPostgresCluster,
  postgresAccount,
  postgresServerArgs,
  postgresSuperuser,
} from "../tools/postgres-server.js";
import { freeListeningPort, freeTemporalPort } from "../util/free-port.js";
import { resolveTemporalBinaries, type TemporalBinaries } from "./binaries.js";
import { type NginxPorts, nginxConfig, nginxSniffer, resolveNginx } from "./nginx.js";
import {
  answers200,
  type ClusterProcess,
  isRunning,
  type LaunchOptions,
  launch,
  logFile,
  stopProcess,
  waitUntil,
  withStartTime,
} from "./processes.js";
import {
  type TemporalPorts,
  temporalDatabases,
  temporalDynamicConfig,
  temporalServerConfig,
  temporalUiConfig,
} from "./temporal-config.js";
import { prepareNamespace } from "./temporal-namespace.js";

/**
 * `flowlog cluster up|down|status` (issue 16, D32): the reference deployment on one machine. PostgreSQL
 * (Debian's), a real Temporal server on it with its Web UI, two `flowlog serve` and two `flowlog worker`
 * processes on the PostgreSQL store, and nginx in front. Everything lives in one directory: data, logs,
 * configuration, and the record of what was started, so `down` stops exactly that and `up` again resumes
 * on the same data and ports.
 */

export interface ClusterOptions {
  /** Holds everything the cluster writes (git-ignored `.cluster` by default). */
  dir: string;
  /** nginx's public port: REST, Connect, gRPC-Web and gRPC. */
  port: number;
  /** The Temporal frontend's gRPC port. */
  temporalPort: number;
  uiPort: number;
  /** flowlog serve and flowlog worker processes; two each by default. */
  replicas: number;
  /** Settings every flowlog process gets beside the cluster's own (FLOWLOG_ALLOW_PRIVATE_NETWORKS, ...). */
  env: NodeJS.ProcessEnv;
}

interface ClusterPorts {
  postgres: number;
  temporal: TemporalPorts;
  ui: number;
  nginx: NginxPorts;
  serve: number[];
  worker: number[];
}

/** Starts the named process unless the cluster's record shows it running already. */
type Start = (name: string, command: [string, string[]], options?: LaunchOptions) => Promise<ClusterProcess>;

interface ClusterState {
  ports: ClusterPorts;
  /**
   * The flowlog settings (FLOWLOG_*, TEMPORAL_* variables) of the `up` that started the cluster: a
   * replica started again later gets the same ones as its siblings, whatever the later shell holds.
   */
  settings: Record<string, string>;
  processes: ClusterProcess[];
}

export interface ClusterUp {
  apiUrl: string;
  grpcAddress: string;
  temporalAddress: string;
  temporalUiUrl: string;
  temporalMetricsUrl: string;
  databaseUrl: string;
  /** A file of `export NAME=value` lines: what the CLI needs to work on the cluster's store. */
  envFile: string;
  serveUrls: string[];
  workerUrls: string[];
}

const exec = promisify(execFile);
const namespace = "default";
const flowlogDatabase = "flowlog";
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const flowlogBin = path.join(repoRoot, "bin", "flowlog.js");

/** Where each part of the cluster keeps its files, under one directory. */
function layoutOf(dir: string) {
  const root = path.resolve(dir);
  const postgres = path.join(root, "postgres");
  return {
    dir: root,
    state: path.join(root, "state.json"),
    logs: path.join(root, "logs"),
    postgres,
    postgresData: path.join(postgres, "data"),
    temporal: path.join(root, "temporal"),
    ui: path.join(root, "temporal-ui"),
    nginx: path.join(root, "nginx"),
    masterKey: path.join(root, "master.key"),
    envFile: path.join(root, "env"),
    flowlogData: path.join(root, "flowlog"),
  };
}

type Layout = ReturnType<typeof layoutOf>;

export async function clusterUp(options: ClusterOptions): Promise<ClusterUp> {
  const layout = layoutOf(options.dir);
  const previous = await readState(layout);
  for (const dir of [layout.logs, layout.postgres, layout.temporal, layout.ui, layout.flowlogData]) {
    await mkdir(dir, { recursive: true });
  }
  for (const dir of ["body", "proxy", "fastcgi", "uwsgi", "scgi"]) {
    await mkdir(path.join(layout.nginx, "tmp", dir), { recursive: true });
  }
  // Tools first: a missing package or a first build fails before anything runs.
  const postgresBinaries = await resolvePostgresBinaries();
  const temporalBinaries = await resolveTemporalBinaries();
  const nginx = await resolveNginx();

  const ports = previous?.ports ?? (await choosePorts(options));
  const settings =
    previous && (await anyRunning(previous.processes)) ? previous.settings : flowlogSettings(options.env);
  const state: ClusterState = { ports, settings, processes: [] };
  const startedNow: ClusterProcess[] = [];
  // What still runs from an earlier `up` is kept, so `up` again brings back only what died.
  const start: Start = async (name, command, launchOptions) => {
    const earlier = previous?.processes.find((p) => p.name === name);
    const kept = earlier && (await isRunning(earlier)) ? withStartTime(earlier) : undefined;
    const process_ = kept ?? launch(layout.logs, name, command, launchOptions);
    if (!kept) startedNow.push(process_);
    state.processes.push(process_);
    await writeState(layout, state);
    return process_;
  };
  try {
    const databaseUrl = await startPostgres(layout, ports, postgresBinaries, start);
    await startTemporal(layout, ports, temporalBinaries, start);
    const flowlogEnv = {
      ...withoutFlowlogSettings(options.env),
      ...settings,
      FLOWLOG_DATABASE_URL: databaseUrl,
      FLOWLOG_MASTER_KEY: await masterKey(layout),
      FLOWLOG_DATA_DIR: layout.flowlogData,
      FLOWLOG_PUBLIC_BASE_URL: `http://localhost:${ports.nginx.public}`,
      TEMPORAL_ADDRESS: `127.0.0.1:${ports.temporal.frontend}`,
      TEMPORAL_NAMESPACE: namespace,
      // nginx is every request's peer; it names the client in X-Forwarded-For.
      FLOWLOG_TRUSTED_PROXIES: "127.0.0.1",
    };
    await writeEnvFile(layout, flowlogEnv);
    // One replica at a time, each ready before the next: workers first, so executions find a poller.
    const replicas = async (kind: "worker" | "serve", ports_: number[], portVariable: string) => {
      for (const [n, port] of ports_.entries()) {
        const replica = await start(`flowlog-${kind}-${n + 1}`, [process.execPath, [flowlogBin, kind]], {
          env: { ...flowlogEnv, [portVariable]: String(port) },
          cwd: repoRoot,
          probeUrl: `http://127.0.0.1:${port}/readyz`,
        });
        await waitUntil(layout.logs, replica, () => answers200(replica.probeUrl as string), 120_000);
      }
    };
    await replicas("worker", ports.worker, "FLOWLOG_WORKER_PORT");
    await replicas("serve", ports.serve, "PORT");
    await startNginx(layout, ports, nginx, start);
    return addressesOf(layout, ports, databaseUrl);
  } catch (error) {
    await stopAll(startedNow);
    throw error;
  }
}

/** Stops every process `up` recorded, newest first; answers the names it stopped. Data stays. */
export async function clusterDown(dir: string): Promise<string[]> {
  const layout = layoutOf(dir);
  const state = await readState(layout);
  if (!state) return [];
  const stopped = await stopAll(state.processes);
  await writeState(layout, { ...state, processes: [] });
  return stopped;
}

/** The settings of the cluster's `env` file, which the CLI needs to work on its store. */
export async function clusterEnv(dir: string): Promise<Record<string, string>> {
  const text = await readFile(layoutOf(dir).envFile, "utf8");
  return Object.fromEntries(
    text
      .trim()
      .split("\n")
      .map((line) => line.replace(/^export /, "").split(/=(.*)/s, 2) as [string, string]),
  );
}

export interface ProcessStatus {
  name: string;
  pid: number;
  running: boolean;
  /** Whether its probe answered 200; undefined for a process without one. */
  ready: boolean | undefined;
  log: string;
}

export async function clusterStatus(dir: string): Promise<ProcessStatus[]> {
  const layout = layoutOf(dir);
  const state = await readState(layout);
  return Promise.all(
    (state?.processes ?? []).map(async (process_) => {
      const running = await isRunning(process_);
      const ready =
        process_.probeUrl === undefined
          ? undefined
          : running && (await answers200(process_.probeUrl).catch(() => false));
      return {
        name: process_.name,
        pid: process_.pid,
        running,
        ready,
        log: logFile(layout.logs, process_.name),
      };
    }),
  );
}

/** Deletes the cluster's directory: its data, keys and logs. Refused while anything of it runs. */
export async function clusterPurge(dir: string): Promise<void> {
  const layout = layoutOf(dir);
  const state = await readState(layout);
  if (state && (await anyRunning(state.processes))) {
    throw new Error(`the cluster in ${layout.dir} is up: \`flowlog cluster down\` first`);
  }
  await rm(layout.dir, { recursive: true, force: true });
}

async function startPostgres(
  layout: Layout,
  ports: ClusterPorts,
  binaries: Awaited<ReturnType<typeof resolvePostgresBinaries>>,
  start: Start,
): Promise<string> {
  const asOwner = await postgresAccount(layout.postgres, { dieWithParent: false });
  // Run as root, PostgreSQL runs as its own account, which must be able to reach the directory.
  await exec(...asOwner("test", ["-w", layout.postgres])).catch(() => {
    throw new Error(
      `PostgreSQL's account cannot write ${layout.postgres}: a directory above it is closed to other users. ` +
        "Choose a --dir every user can reach, for instance under /var/tmp.",
    );
  });
  if (!existsSync(layout.postgresData)) {
    await initPostgresCluster(binaries, asOwner, layout.postgresData, { durable: true });
  }
  const url = (database: string) => `postgres://${postgresSuperuser}@127.0.0.1:${ports.postgres}/${database}`;
  const postgres = await start(
    "postgres",
    asOwner(binaries.postgres, postgresServerArgs(layout.postgresData, ports.postgres, layout.postgres)),
    { stopSignal: "SIGINT" },
  );
  await waitUntil(layout.logs, postgres, () => connects(url("postgres")), 60_000);
  const admin = new pg.Client({ connectionString: url("postgres") });
  await admin.connect();
  try {
    for (const name of [flowlogDatabase, temporalDatabases.persistence, temporalDatabases.visibility]) {
      const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${name}`);
    }
  } finally {
    await admin.end();
  }
  return url(flowlogDatabase);
}

async function connects(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function startTemporal(
  layout: Layout,
  ports: ClusterPorts,
  binaries: TemporalBinaries,
  start: Start,
): Promise<void> {
  // The schemas: versioning tables, then every versioned step up to the server's (both idempotent).
  for (const [database, schema] of [
    [temporalDatabases.persistence, "postgresql/v12/temporal"],
    [temporalDatabases.visibility, "postgresql/v12/visibility"],
  ] as const) {
    const connection = [
      ...["--plugin", "postgres12", "--endpoint", "127.0.0.1", "--port", String(ports.postgres)],
      ...["--user", postgresSuperuser, "--database", database],
    ];
    await runTool(layout, binaries.sqlTool, [...connection, "setup-schema", "-v", "0.0"]);
    await runTool(layout, binaries.sqlTool, [...connection, "update-schema", "--schema-name", schema]);
  }
  const configDir = path.join(layout.temporal, "config");
  await mkdir(configDir, { recursive: true });
  const dynamicConfigFile = path.join(layout.temporal, "dynamicconfig.yaml");
  await writeJsonAsYaml(dynamicConfigFile, temporalDynamicConfig());
  await writeJsonAsYaml(
    path.join(configDir, "cluster.yaml"),
    temporalServerConfig({
      ports: ports.temporal,
      postgresPort: ports.postgres,
      postgresUser: postgresSuperuser,
      dynamicConfigFile,
    }),
  );
  const address = `127.0.0.1:${ports.temporal.frontend}`;
  const server = await start(
    "temporal-server",
    [
      binaries.server,
      ["--root", layout.temporal, "--config", "config", "--env", "cluster", "--allow-no-auth", "start"],
    ],
    { probeUrl: `http://127.0.0.1:${ports.temporal.frontendHttp}/api/v1/namespaces/${namespace}` },
  );
  await waitUntil(layout.logs, server, () => frontendServes(address), 120_000);
  await prepareNamespace(address, namespace);

  const uiConfigDir = path.join(layout.ui, "config");
  await mkdir(uiConfigDir, { recursive: true });
  await writeJsonAsYaml(
    path.join(uiConfigDir, "cluster.yaml"),
    temporalUiConfig({ frontendPort: ports.temporal.frontend, uiPort: ports.ui, namespace }),
  );
  const ui = await start(
    "temporal-ui",
    [binaries.uiServer, ["--root", layout.ui, "--config", "config", "--env", "cluster", "start"]],
    {
      probeUrl: `http://127.0.0.1:${ports.ui}/`,
    },
  );
  await waitUntil(layout.logs, ui, () => answers200(ui.probeUrl as string), 60_000);
}

async function frontendServes(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 1_000 });
  try {
    await connection.withDeadline(Date.now() + 2_000, () => connection.workflowService.getSystemInfo({}));
    return true;
  } finally {
    await connection.close();
  }
}

async function startNginx(layout: Layout, ports: ClusterPorts, nginx: string, start: Start): Promise<void> {
  const snifferFile = path.join(layout.nginx, "protocol.js");
  await writeFile(snifferFile, nginxSniffer(ports.nginx));
  const configFile = path.join(layout.nginx, "nginx.conf");
  await writeFile(
    configFile,
    nginxConfig({
      ports: ports.nginx,
      replicas: ports.serve,
      dir: layout.nginx,
      snifferFile,
    }),
  );
  // `-e stderr` and the config's `error_log stderr`: from its first line, what nginx has to say is in its
  // log beside the others', where a failed start quotes it.
  const front = await start("nginx", [nginx, ["-e", "stderr", "-p", layout.nginx, "-c", configFile]], {
    probeUrl: `http://127.0.0.1:${ports.nginx.public}/readyz`,
  });
  await waitUntil(layout.logs, front, () => answers200(front.probeUrl as string), 30_000);
}

/** Runs one of the sql tool's commands to its end; its output goes to the tool's log. */
async function runTool(layout: Layout, program: string, args: string[]): Promise<void> {
  const { stdout, stderr } = await exec(program, args).catch(
    (error: { stdout?: string; stderr?: string }) => {
      throw new Error(
        `temporal-sql-tool ${args.slice(-4).join(" ")} failed: ${`${error.stderr ?? ""}${error.stdout ?? ""}`.trim()}`,
      );
    },
  );
  await appendFile(logFile(layout.logs, "temporal-sql-tool"), `${stdout}${stderr}`);
}

async function choosePorts(options: ClusterOptions): Promise<ClusterPorts> {
  // Every port is kept in the state and bound again at each `up`: none may be one an outgoing
  // connection can take in between.
  return {
    postgres: await freeListeningPort(),
    temporal: {
      frontend: options.temporalPort,
      frontendHttp: await freeTemporalPort(),
      frontendMembership: await freeTemporalPort(),
      history: await freeTemporalPort(),
      historyMembership: await freeTemporalPort(),
      matching: await freeTemporalPort(),
      matchingMembership: await freeTemporalPort(),
      worker: await freeTemporalPort(),
      workerMembership: await freeTemporalPort(),
      metrics: await freeListeningPort(),
    },
    ui: options.uiPort,
    nginx: { public: options.port, http1: await freeListeningPort(), h2c: await freeListeningPort() },
    serve: await Promise.all(Array.from({ length: options.replicas }, () => freeListeningPort())),
    worker: await Promise.all(Array.from({ length: options.replicas }, () => freeListeningPort())),
  };
}

/** The cluster's master key (D24), made once and kept in its directory, readable by its owner only. */
async function masterKey(layout: Layout): Promise<string> {
  if (!existsSync(layout.masterKey)) {
    await writeFile(layout.masterKey, randomBytes(32).toString("base64"), { mode: 0o600 });
  }
  return (await readFile(layout.masterKey, "utf8")).trim();
}

async function writeEnvFile(layout: Layout, env: Record<string, string | undefined>): Promise<void> {
  const names = [
    "FLOWLOG_DATABASE_URL",
    "FLOWLOG_MASTER_KEY",
    "FLOWLOG_DATA_DIR",
    "FLOWLOG_PUBLIC_BASE_URL",
    "TEMPORAL_ADDRESS",
    "TEMPORAL_NAMESPACE",
  ];
  const lines = names.map((name) => `export ${name}=${env[name] ?? ""}`);
  await writeFile(layout.envFile, `${lines.join("\n")}\n`, { mode: 0o600 });
}

/** Where each part answers, as `up` prints it. */
function addressesOf(layout: Layout, ports: ClusterPorts, databaseUrl: string): ClusterUp {
  return {
    apiUrl: `http://localhost:${ports.nginx.public}`,
    grpcAddress: `localhost:${ports.nginx.public}`,
    temporalAddress: `127.0.0.1:${ports.temporal.frontend}`,
    temporalUiUrl: `http://localhost:${ports.ui}`,
    temporalMetricsUrl: `http://127.0.0.1:${ports.temporal.metrics}/metrics`,
    databaseUrl,
    envFile: layout.envFile,
    serveUrls: ports.serve.map((port) => `http://127.0.0.1:${port}`),
    workerUrls: ports.worker.map((port) => `http://127.0.0.1:${port}`),
  };
}

async function readState(layout: Layout): Promise<ClusterState | undefined> {
  try {
    return JSON.parse(await readFile(layout.state, "utf8")) as ClusterState;
  } catch {
    return undefined;
  }
}

/** The state holds settings, which may hold secrets (an SMTP password): its owner's alone. */
function writeState(layout: Layout, state: ClusterState): Promise<void> {
  return writeFile(layout.state, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
}

const isFlowlogSetting = (name: string) => /^(FLOWLOG|TEMPORAL)_/.test(name);

/** The variables that configure flowlog, from an environment. */
function flowlogSettings(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => isFlowlogSetting(entry[0]) && entry[1] !== undefined,
    ),
  );
}

/** The rest of an environment (PATH, HOME, ...). */
function withoutFlowlogSettings(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !isFlowlogSetting(name)));
}

async function anyRunning(processes: ClusterProcess[]): Promise<boolean> {
  return (await Promise.all(processes.map(isRunning))).some(Boolean);
}

async function stopAll(processes: ClusterProcess[]): Promise<string[]> {
  const stopped: string[] = [];
  for (const process_ of [...processes].reverse()) {
    if (await stopProcess(process_)) stopped.push(process_.name);
  }
  return stopped;
}

/** JSON is YAML: the Go programs read these files with YAML parsers. */
function writeJsonAsYaml(file: string, value: object): Promise<void> {
  return writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
}
