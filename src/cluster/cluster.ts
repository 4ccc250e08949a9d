import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { Connection } from "@temporalio/client";
import pg from "pg";
import { type WorkerRole, workerRoles } from "../config/config.js";
import { resolvePostgresBinaries } from "../tools/postgres-binaries.js";
import {
  initPostgresCluster,
  postgresAccount,
  postgresServerArgs,
  postgresSuperuser,
} from "../tools/postgres-server.js";
import { freeListeningPort, freeTemporalPort } from "../util/free-port.js";
import { repoRoot } from "../util/repo-root.js";
import { resolveTemporalBinaries, type TemporalBinaries } from "./binaries.js";
import {
  keptSecret,
  passThroughMode,
  privateSubdir,
  readPrivateFile,
  trustedClusterDir,
  writePrivateFile,
} from "./cluster-dir.js";
import { type NginxPorts, nginxConfig, nginxSniffer, resolveNginx } from "./nginx.js";
import {
  answers200,
  appendToLog,
  type ClusterProcess,
  checkPid,
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
 * (Debian's), a real Temporal server on it with its Web UI, two `flowlog serve` processes and a `flowlog
 * worker` of each role (issue 51: one runs executions, the other deliveries) on the PostgreSQL store, and
 * nginx in front. Everything lives in one directory: data, logs, configuration, and the record of what
 * was started, so `down` stops exactly that and `up` again resumes on the same data and ports. Everything
 * listens on loopback (D46), and nothing trusts another local user (issue 49): the directory is its
 * owner's alone (cluster-dir.ts), PostgreSQL takes peer authentication on its socket and a password on TCP.
 */

export interface ClusterOptions {
  /** Holds everything the cluster writes (git-ignored `.cluster` by default). */
  dir: string;
  /** nginx's public port: REST, Connect, gRPC-Web and gRPC. */
  port: number;
  /** The Temporal frontend's gRPC port. */
  temporalPort: number;
  uiPort: number;
  /** flowlog serve processes; two by default. */
  replicas: number;
  /** flowlog worker processes of each role (FLOWLOG_WORKER_ROLES); one each by default. */
  workers: Record<WorkerRole, number>;
  /** Settings every flowlog process gets beside the cluster's own (FLOWLOG_ALLOW_PRIVATE_NETWORKS, ...). */
  env: NodeJS.ProcessEnv;
}

interface ClusterPorts {
  postgres: number;
  temporal: TemporalPorts;
  ui: number;
  nginx: NginxPorts;
  serve: number[];
  /** The probe ports of each role's workers (`worker` before issue 51, when every worker ran both). */
  workers: Record<WorkerRole, number[]>;
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
  /** With the service role's password: shown masked (maskPassword), kept whole in the env file. */
  databaseUrl: string;
  /** A file of `export NAME=value` lines: what the CLI needs to work on the cluster's store. */
  envFile: string;
  serveUrls: string[];
  workerUrls: Record<WorkerRole, string[]>;
}

const exec = promisify(execFile);
const namespace = "default";
const flowlogDatabase = "flowlog";
/** The role flowlog and Temporal connect as: owner of their three databases, no superuser. */
const serviceRole = "flowlog";
const loopback = "127.0.0.1";
const flowlogBin = path.join(repoRoot, "bin", "flowlog.js");

/** Where each part of the cluster keeps its files, under one directory (its real path, once trusted). */
function layoutOf(root: string) {
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
    /** The service role's password: flowlog's processes get it in their environment, Temporal's in files. */
    postgresPassword: path.join(root, "postgres.password"),
    envFile: path.join(root, "env"),
    flowlogData: path.join(root, "flowlog"),
  };
}

type Layout = ReturnType<typeof layoutOf>;

/** The layout of an existing cluster directory, checked; undefined when there is none. */
async function existingLayout(dir: string): Promise<Layout | undefined> {
  const root = await trustedClusterDir(dir, { create: false });
  return root === undefined ? undefined : layoutOf(root);
}

export async function clusterUp(options: ClusterOptions): Promise<ClusterUp> {
  const layout = layoutOf((await trustedClusterDir(options.dir, { create: true })) as string);
  const previous = await readState(layout);
  for (const dir of [layout.logs, layout.postgres, layout.temporal, layout.ui, layout.flowlogData]) {
    await privateSubdir(dir);
  }
  // nginx's workers (not root) pass through to their temp directories, which nginx hands them itself.
  await privateSubdir(layout.nginx, passThroughMode);
  await privateSubdir(path.join(layout.nginx, "tmp"), passThroughMode);
  for (const dir of ["body", "proxy", "fastcgi", "uwsgi", "scgi"]) {
    await privateSubdir(path.join(layout.nginx, "tmp", dir));
  }
  // Tools first: a missing package or a first build fails before anything runs.
  const postgresBinaries = await resolvePostgresBinaries();
  const temporalBinaries = await resolveTemporalBinaries();
  const nginx = await resolveNginx();

  const ports = previous ? await earlierPorts(layout, previous, options) : await choosePorts(options);
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
    const password = await startPostgres(layout, ports, postgresBinaries, start);
    const databaseUrl = `postgres://${serviceRole}:${password}@${loopback}:${ports.postgres}/${flowlogDatabase}`;
    await startTemporal(layout, ports, temporalBinaries, start, password);
    const flowlogEnv = {
      ...withoutFlowlogSettings(options.env),
      ...settings,
      FLOWLOG_DATABASE_URL: databaseUrl,
      FLOWLOG_MASTER_KEY: await masterKey(layout),
      FLOWLOG_DATA_DIR: layout.flowlogData,
      FLOWLOG_PUBLIC_BASE_URL: `http://localhost:${ports.nginx.public}`,
      TEMPORAL_ADDRESS: `${loopback}:${ports.temporal.frontend}`,
      TEMPORAL_NAMESPACE: namespace,
      // nginx is every request's peer; it names the client in X-Forwarded-For.
      FLOWLOG_TRUSTED_PROXIES: loopback,
      // D46: the replicas are reached through nginx alone; whatever the shell of `up` said.
      HOST: loopback,
      FLOWLOG_PROBE_HOST: loopback,
    };
    await writeEnvFile(layout, flowlogEnv);
    // One replica at a time, each ready before the next: workers first, so executions find a poller.
    const replicas = async (name: string, command: string, ports_: number[], env: NodeJS.ProcessEnv) => {
      for (const [n, port] of ports_.entries()) {
        const replica = await start(`${name}-${n + 1}`, [process.execPath, [flowlogBin, command]], {
          env: {
            ...flowlogEnv,
            ...env,
            [command === "worker" ? "FLOWLOG_WORKER_PORT" : "PORT"]: String(port),
          },
          cwd: repoRoot,
          probeUrl: `http://${loopback}:${port}/readyz`,
        });
        await waitUntil(layout.logs, replica, () => answers200(replica.probeUrl as string), 120_000);
      }
    };
    // Issue 51: each worker runs one role, so executions and deliveries scale, and stop, apart.
    for (const role of workerRoles) {
      await replicas(`flowlog-worker-${role}`, "worker", ports.workers[role], { FLOWLOG_WORKER_ROLES: role });
    }
    await replicas("flowlog-serve", "serve", ports.serve, {});
    await startNginx(layout, ports, nginx, start);
    return addressesOf(layout, ports, databaseUrl);
  } catch (error) {
    await stopAll(startedNow);
    throw error;
  }
}

/** Stops every process `up` recorded, newest first; answers the names it stopped. Data stays. */
export async function clusterDown(dir: string): Promise<string[]> {
  const layout = await existingLayout(dir);
  const state = layout && (await readState(layout));
  if (!layout || !state) return [];
  const stopped = await stopAll(state.processes);
  await writeState(layout, { ...state, processes: [] });
  return stopped;
}

/** The settings of the cluster's `env` file, which the CLI needs to work on its store. */
export async function clusterEnv(dir: string): Promise<Record<string, string>> {
  const layout = await existingLayout(dir);
  const text = layout && (await readPrivateFile(layout.envFile));
  if (text === undefined) throw new Error(`no cluster was started in ${dir}: it has no env file`);
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
  const layout = await existingLayout(dir);
  const state = layout && (await readState(layout));
  if (!layout || !state) return [];
  return Promise.all(
    state.processes.map(async (process_) => {
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
  const layout = await existingLayout(dir);
  if (!layout) return;
  const state = await readState(layout);
  if (state && (await anyRunning(state.processes))) {
    throw new Error(`the cluster in ${layout.dir} is up: \`flowlog cluster down\` first`);
  }
  await rm(layout.dir, { recursive: true, force: true });
}

/**
 * Starts PostgreSQL and answers the service role's password. The cluster's user connects over the socket
 * as the superuser (peer authentication, initPostgresCluster), to make the role and its databases; the
 * processes connect over loopback TCP as that role, by its password (scram-sha-256).
 */
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
      `PostgreSQL's account cannot write ${layout.postgres}: ${layout.dir} or a directory above it does not ` +
        "let other users pass (the cluster makes its directory 0711 as root). Choose a --dir every user can " +
        "pass through, for instance under /var/tmp.",
    );
  });
  if (!existsSync(layout.postgresData)) {
    await initPostgresCluster(binaries, asOwner, layout.postgresData, {
      durable: true,
      tcp: "scram-sha-256",
    });
  } else {
    await refuseTrustingCluster(layout);
  }
  const password = await keptSecret(layout.postgresPassword, () => randomBytes(32).toString("hex"));
  const postgres = await start(
    "postgres",
    asOwner(binaries.postgres, postgresServerArgs(layout.postgresData, ports.postgres, layout.postgres)),
    { stopSignal: "SIGINT" },
  );
  const superuser = {
    host: layout.postgres,
    port: ports.postgres,
    user: postgresSuperuser(),
    database: "postgres",
  };
  await waitUntil(layout.logs, postgres, () => connects(superuser), 60_000);
  const admin = new pg.Client(superuser);
  await admin.connect();
  try {
    const role = await admin.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [serviceRole]);
    if (role.rowCount === 0) await admin.query(`CREATE ROLE ${serviceRole} LOGIN`);
    // Hex only: nothing in it needs quoting. Set at every start, so the file is what holds.
    await admin.query(`ALTER ROLE ${serviceRole} PASSWORD '${password}'`);
    for (const name of [flowlogDatabase, temporalDatabases.persistence, temporalDatabases.visibility]) {
      const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${name} OWNER ${serviceRole}`);
    }
  } finally {
    await admin.end();
  }
  return password;
}

/**
 * A cluster made before issue 49 trusts every local user on TCP and on its socket, and has no service role:
 * it is not started as it is.
 */
async function refuseTrustingCluster(layout: Layout): Promise<void> {
  const rules = await readFile(path.join(layout.postgresData, "pg_hba.conf"), "utf8");
  if (/^\s*[^#\s].*\btrust\b/m.test(rules)) {
    throw new Error(
      `the PostgreSQL cluster in ${layout.postgresData} trusts every local user (made by an earlier flowlog): ` +
        `\`flowlog cluster purge --dir ${layout.dir}\` deletes it and its data, and \`up\` makes a new one`,
    );
  }
}

async function connects(config: pg.ClientConfig): Promise<boolean> {
  const client = new pg.Client({ ...config, connectionTimeoutMillis: 2_000 });
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
  password: string,
): Promise<void> {
  // The schemas: versioning tables, then every versioned step up to the server's (both idempotent).
  for (const [database, schema] of [
    [temporalDatabases.persistence, "postgresql/v12/temporal"],
    [temporalDatabases.visibility, "postgresql/v12/visibility"],
  ] as const) {
    const connection = [
      ...["--plugin", "postgres12", "--endpoint", loopback, "--port", String(ports.postgres)],
      ...["--user", serviceRole, "--database", database],
    ];
    await runTool(layout, binaries.sqlTool, [...connection, "setup-schema", "-v", "0.0"], password);
    await runTool(
      layout,
      binaries.sqlTool,
      [...connection, "update-schema", "--schema-name", schema],
      password,
    );
  }
  const configDir = path.join(layout.temporal, "config");
  await privateSubdir(configDir);
  const dynamicConfigFile = path.join(layout.temporal, "dynamicconfig.yaml");
  await writeJsonAsYaml(dynamicConfigFile, temporalDynamicConfig());
  // The password is in this file, its owner's alone, never on the server's command line.
  await writeJsonAsYaml(
    path.join(configDir, "cluster.yaml"),
    temporalServerConfig({
      ports: ports.temporal,
      postgresPort: ports.postgres,
      postgresUser: serviceRole,
      postgresPassword: password,
      dynamicConfigFile,
    }),
  );
  const address = `${loopback}:${ports.temporal.frontend}`;
  const server = await start(
    "temporal-server",
    [
      binaries.server,
      ["--root", layout.temporal, "--config", "config", "--env", "cluster", "--allow-no-auth", "start"],
    ],
    { probeUrl: `http://${loopback}:${ports.temporal.frontendHttp}/api/v1/namespaces/${namespace}` },
  );
  await waitUntil(layout.logs, server, () => frontendServes(address), 120_000);
  await prepareNamespace(address, namespace);

  const uiConfigDir = path.join(layout.ui, "config");
  await privateSubdir(uiConfigDir);
  await writeJsonAsYaml(
    path.join(uiConfigDir, "cluster.yaml"),
    temporalUiConfig({ frontendPort: ports.temporal.frontend, uiPort: ports.ui, namespace }),
  );
  const ui = await start(
    "temporal-ui",
    [binaries.uiServer, ["--root", layout.ui, "--config", "config", "--env", "cluster", "start"]],
    {
      probeUrl: `http://${loopback}:${ports.ui}/`,
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
  // Root runs them: written through no link, and only their owner may change them.
  await writePrivateFile(snifferFile, nginxSniffer(ports.nginx));
  const configFile = path.join(layout.nginx, "nginx.conf");
  await writePrivateFile(
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
    probeUrl: `http://${loopback}:${ports.nginx.public}/readyz`,
  });
  await waitUntil(layout.logs, front, () => answers200(front.probeUrl as string), 30_000);
}

/**
 * Runs one of the sql tool's commands to its end; its output goes to the tool's log. The password goes in
 * its environment (SQL_PASSWORD), where `ps` does not show it.
 */
async function runTool(layout: Layout, program: string, args: string[], password: string): Promise<void> {
  const { stdout, stderr } = await exec(program, args, {
    env: { ...process.env, SQL_PASSWORD: password },
  }).catch((error: { stdout?: string; stderr?: string }) => {
    throw new Error(
      `temporal-sql-tool ${args.slice(-4).join(" ")} failed: ${`${error.stderr ?? ""}${error.stdout ?? ""}`.trim()}`,
    );
  });
  appendToLog(layout.logs, "temporal-sql-tool", `${stdout}${stderr}`);
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
    serve: await freePorts(options.replicas),
    workers: await workerPorts(options),
  };
}

async function workerPorts(options: ClusterOptions): Promise<Record<WorkerRole, number[]>> {
  return {
    executions: await freePorts(options.workers.executions),
    deliveries: await freePorts(options.workers.deliveries),
  };
}

function freePorts(count: number): Promise<number[]> {
  return Promise.all(Array.from({ length: count }, () => freeListeningPort()));
}

/**
 * The ports of an earlier `up`, kept. A cluster started before its workers had roles (issue 51) ran
 * replicas of both, which this `up` would no longer know to stop: once it is down, its workers get ports
 * anew.
 */
async function earlierPorts(
  layout: Layout,
  previous: ClusterState,
  options: ClusterOptions,
): Promise<ClusterPorts> {
  // Read from a file an earlier flowlog may have written: `workers` may be missing.
  if ((previous.ports as Partial<ClusterPorts>).workers) return previous.ports;
  if (await anyRunning(previous.processes)) {
    throw new Error(
      `the cluster in ${layout.dir} runs workers of both roles, as an earlier flowlog started them: ` +
        "`flowlog cluster down` first, and `up` starts a worker of each role",
    );
  }
  return { ...previous.ports, workers: await workerPorts(options) };
}

/** The cluster's master key (D24), made once and kept in its directory, readable by its owner only. */
function masterKey(layout: Layout): Promise<string> {
  return keptSecret(layout.masterKey, () => randomBytes(32).toString("base64"));
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
  await writePrivateFile(layout.envFile, `${lines.join("\n")}\n`);
}

/** Where each part answers, as `up` prints it. */
function addressesOf(layout: Layout, ports: ClusterPorts, databaseUrl: string): ClusterUp {
  const urls = (replicas: number[]) => replicas.map((port) => `http://${loopback}:${port}`);
  return {
    apiUrl: `http://localhost:${ports.nginx.public}`,
    grpcAddress: `localhost:${ports.nginx.public}`,
    temporalAddress: `${loopback}:${ports.temporal.frontend}`,
    temporalUiUrl: `http://localhost:${ports.ui}`,
    temporalMetricsUrl: `http://${loopback}:${ports.temporal.metrics}/metrics`,
    databaseUrl,
    envFile: layout.envFile,
    serveUrls: urls(ports.serve),
    workerUrls: { executions: urls(ports.workers.executions), deliveries: urls(ports.workers.deliveries) },
  };
}

/** The record of an earlier `up`; undefined when there is none, or it is not JSON (a write cut short). */
async function readState(layout: Layout): Promise<ClusterState | undefined> {
  const text = await readPrivateFile(layout.state);
  let state: ClusterState;
  try {
    state = JSON.parse(text ?? "") as ClusterState;
  } catch {
    return undefined;
  }
  try {
    for (const process_ of state.processes) checkPid(process_);
  } catch (error) {
    throw new Error(`${layout.state}: ${(error as Error).message}`);
  }
  return state;
}

/** The state holds settings, which may hold secrets (an SMTP password): its owner's alone. */
function writeState(layout: Layout, state: ClusterState): Promise<void> {
  return writePrivateFile(layout.state, `${JSON.stringify(state, null, 2)}\n`);
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
  return writePrivateFile(file, `${JSON.stringify(value, null, 2)}\n`);
}
