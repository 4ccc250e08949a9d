import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterEnv } from "../src/cluster/cluster.js";
import { logTail } from "../src/cluster/processes.js";
import { freeListeningPort, freeTemporalPort } from "../src/util/free-port.js";
import { offlineWorkflowState } from "./support/flowlog.js";
import { resolveGrpcurl } from "./support/grpcurl.js";
import { type HttpReceiver, sendJson, startReceiver } from "./support/http-receiver.js";
import { until, untilApi, untilTrue } from "./support/until.js";

/**
 * Issue 16 (D32): the reference cluster, started as an operator starts it (`flowlog cluster up`), used
 * only through nginx's one port, as clients use it: PostgreSQL, a real Temporal server, two `flowlog
 * serve` processes, two `flowlog worker` processes running executions and one running deliveries (issue
 * 51). Then one serve and one executions worker are killed under load, the deliveries worker is
 * stopped while executions go on, and a subscription's failed deliveries are recovered (D37).
 */

const repoRoot = path.resolve(import.meta.dirname, "..");
const run = promisify(execFile);

/** Holds the cluster's directory, which `up` makes itself. */
let parent: string;
let dir: string;
let api: string;
let env: Record<string, string>;
let receiver: HttpReceiver;
let account: { key: string; workspace: { id: string } };

/** `flowlog <args>` as a separate process, as an operator runs it. */
function flowlog(args: string[], extraEnv: Record<string, string> = {}) {
  return run(process.execPath, ["bin/flowlog.js", ...args], {
    cwd: repoRoot,
    env: { ...process.env, FLOWLOG_LOG_LEVEL: "warn", ...extraEnv },
  });
}

let upArgs: string[];

beforeAll(async () => {
  parent = mkdtempSync(path.join(tmpdir(), "flowlog-cluster-"));
  // mkdtemp's directory is its owner's alone; PostgreSQL runs as its own account and must pass through.
  chmodSync(parent, 0o711);
  dir = path.join(parent, "cluster");
  receiver = await startReceiver((_request, response) => sendJson(response, 200, {}));
  const port = await freeListeningPort();
  api = `http://127.0.0.1:${port}`;
  upArgs = [
    ...["cluster", "up", "--dir", dir, "--port", String(port)],
    ...["--temporal-port", String(await freeTemporalPort()), "--ui-port", String(await freeListeningPort())],
    // One of the two is killed under load below, and the other goes on running executions.
    ...["--execution-workers", "2"],
  ];
  const up = await flowlog(upArgs, {
    // The receiver is on loopback (D22); the load below must not be refused by the plan's buckets.
    FLOWLOG_ALLOW_PRIVATE_NETWORKS: "true",
    FLOWLOG_PLAN_LIMITS: JSON.stringify({
      enterprise: {
        api: { requestsPerMinute: 1_000_000, maxBurst: 1_000_000 },
        asyncExecutions: { requestsPerMinute: 1_000_000, maxBurst: 1_000_000 },
        syncExecutions: { requestsPerMinute: 1_000_000, maxBurst: 1_000_000 },
      },
    }),
  });
  expect(up.stdout).toContain(`API (REST, Connect, gRPC-Web; gRPC over h2c)  http://localhost:${port}`);
  // The settings the CLI needs, from the file `up` printed, as docs/deploy.md tells an operator to use it.
  env = await clusterEnv(dir);
  const bootstrap = await flowlog(["bootstrap", "--plan", "enterprise", "--json"], env);
  account = JSON.parse(bootstrap.stdout);
}, 600_000);

afterAll(async () => {
  if (parent) {
    const down = await flowlog(["cluster", "down", "--dir", dir]);
    expect(down.stdout).toMatch(/^stopped nginx, /);
    rmSync(parent, { recursive: true, force: true });
  }
  await receiver?.close();
});

async function post(
  apiPath: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(api + apiPath, {
    method: "POST",
    headers: { "x-api-key": account.key, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  // nginx answers its own errors in HTML: keep their status and first words, not a parse error.
  const text = await response.text();
  try {
    return { status: response.status, json: JSON.parse(text) as Record<string, unknown> };
  } catch {
    return { status: response.status, json: { unparsed: text.slice(0, 200) } };
  }
}

/** The workspace's log entries, every page, through nginx. */
async function allEntries(): Promise<{ executionId: string }[]> {
  const entries: { executionId: string }[] = [];
  let cursor: string | undefined;
  do {
    const query = `workspaceId=${account.workspace.id}&limit=1000${cursor ? `&cursor=${cursor}` : ""}`;
    const response = await fetch(`${api}/api/v1/logs?${query}`, { headers: { "x-api-key": account.key } });
    const page = (await response.json()) as { data: { executionId: string }[]; nextCursor?: string };
    entries.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  return entries;
}

/** The deliveries the receiver got, by the execution they tell of. */
function deliveriesByExecution(): Map<string, string[]> {
  const byExecution = new Map<string, string[]>();
  for (const request of receiver.received) {
    const event = JSON.parse(request.body) as { data: { executionId: string } };
    const keys = byExecution.get(event.data.executionId) ?? [];
    keys.push(String(request.headers["idempotency-key"]));
    byExecution.set(event.data.executionId, keys);
  }
  return byExecution;
}

let workflowId: string;

describe("flowlog cluster up: the reference cluster behind nginx (issue 16, D32)", () => {
  it("serves the logs API over REST and over gRPC on nginx's one port, and an execution's webhook arrives", async () => {
    const created = await post(`/api/v1/workspaces/${account.workspace.id}/workflows`, {
      name: "Cluster test",
      state: offlineWorkflowState,
    });
    expect(created.status).toBe(200);
    workflowId = (created.json.workflow as { id: string }).id;
    const subscribed = await post(`/api/v1/workspaces/${account.workspace.id}/notifications`, {
      channel: "webhook",
      webhook: { url: `${receiver.origin}/hook` },
      allWorkflows: true,
    });
    expect(subscribed.status).toBe(200);

    const executed = await post(`/api/v1/workflows/${workflowId}/execute`, { input: {} });
    expect(executed.status).toBe(200);
    const executionId = executed.json.executionId as string;

    const rest = await fetch(
      `${api}/api/v1/logs?workspaceId=${account.workspace.id}&executionId=${executionId}`,
      { headers: { "x-api-key": account.key } },
    );
    expect(rest.status).toBe(200);
    expect(((await rest.json()) as { data: { executionId: string }[] }).data).toEqual([
      expect.objectContaining({ executionId, level: "info" }),
    ]);

    const grpc = await run(await resolveGrpcurl(), [
      ...["-plaintext", "-H", `x-api-key: ${account.key}`],
      ...["-d", JSON.stringify({ workspace_id: account.workspace.id, execution_id: executionId })],
      ...[api.replace("http://", ""), "flowlog.logs.v1.LogsService/ListLogs"],
    ]);
    expect(JSON.parse(grpc.stdout).data).toEqual([expect.objectContaining({ executionId })]);

    await until("the webhook delivery", () => deliveriesByExecution().get(executionId), 30_000);

    // The workers count what they did, and serve the Temporal SDK's own figures on the same page.
    const state = JSON.parse(readFileSync(path.join(dir, "state.json"), "utf8")) as {
      processes: { name: string; probeUrl: string }[];
    };
    const workerPages = () =>
      Promise.all(
        state.processes
          .filter((p) => p.name.startsWith("flowlog-worker-"))
          .map(async (p) => (await fetch(p.probeUrl.replace("/readyz", "/metrics"))).text()),
      );
    const total = async (series: string) =>
      (await workerPages())
        .flatMap((page) => page.split("\n"))
        .filter((line) => line.startsWith(series))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
    // The attempt is counted once its record is written, just after the receiver answers.
    await untilTrue(
      async () => (await total('flowlog_deliveries_total{channel="webhook",outcome="succeeded"')) >= 1,
      10_000,
    );
    expect(await total('flowlog_executions_total{trigger="api",outcome="success"')).toBeGreaterThanOrEqual(1);
    expect((await workerPages()).join("\n")).toMatch(/^temporal_\w+/m);
    // The serve replicas time their calls to Temporal: the sync execution started one and awaited it.
    const servePages = await Promise.all(
      state.processes
        .filter((p) => p.name.startsWith("flowlog-serve-"))
        .map(async (p) => (await fetch(p.probeUrl.replace("/readyz", "/metrics"))).text()),
    );
    // and count RPCs by protocol: the grpcurl call above came through nginx's h2c listener as gRPC.
    expect(servePages.join("\n")).toMatch(
      /^flowlog_rpc_requests_total\{procedure="flowlog\.logs\.v1\.LogsService\/ListLogs",protocol="grpc",code="ok"[^}]*\} [1-9]/m,
    );
    expect(servePages.join("\n")).toMatch(
      /^flowlog_temporal_call_duration_seconds_count\{[^}]*method="StartWorkflowExecution"[^}]*status="0"[^}]*\} [1-9]/m,
    );
  });

  it("loses no execution and logs none twice when a serve and a worker are SIGKILLed under load; started again, they rejoin", async () => {
    const state = JSON.parse(readFileSync(path.join(dir, "state.json"), "utf8")) as {
      processes: { name: string; pid: number; probeUrl: string }[];
    };
    const named = (name: string) =>
      state.processes.find((p) => p.name === name) as (typeof state.processes)[0];
    const serve = named("flowlog-serve-1");
    const worker = named("flowlog-worker-executions-1");

    const loops = 3;
    const accepted: string[] = [];
    const failures: string[] = [];
    let stop = false;
    const load = Array.from({ length: loops }, async () => {
      while (!stop) {
        try {
          const answer = await post(`/api/v1/workflows/${workflowId}/execute`, { input: {}, async: true });
          if (answer.status === 202) accepted.push(answer.json.executionId as string);
          else failures.push(`${new Date().toISOString()} ${answer.status} ${JSON.stringify(answer.json)}`);
        } catch (error) {
          failures.push(`${new Date().toISOString()} ${String(error)}`);
        }
      }
    });
    await sleep(3_000);
    const killedAt = new Date().toISOString();
    process.kill(serve.pid, "SIGKILL");
    process.kill(worker.pid, "SIGKILL");
    await sleep(3_000);
    // What a supervisor does: start what died. The cluster's record makes it one command.
    const upAt = new Date().toISOString();
    await flowlog(upArgs);
    const upDone = new Date().toISOString();
    await sleep(3_000);
    stop = true;
    await Promise.all(load);

    // Only requests in flight on the killed replica may fail: one per loop at most.
    const timeline = `killed ${killedAt}, up ${upAt} to ${upDone}; failures:\n${failures.join("\n")}`;
    expect(failures.length, timeline).toBeLessThanOrEqual(loops);
    expect(accepted.length).toBeGreaterThan(20);

    // Every accepted execution is logged once, whichever worker ran it, and no execution twice.
    await untilTrue(async () => {
      const logged = new Set((await allEntries()).map((e) => e.executionId));
      return accepted.every((id) => logged.has(id));
    }, 90_000);
    const entries = await allEntries();
    expect(new Set(entries.map((e) => e.executionId)).size).toBe(entries.length);

    // Every one's delivery arrives; a repeat carries the same Idempotency-Key.
    await untilTrue(() => accepted.every((id) => deliveriesByExecution().has(id)), 90_000);
    for (const keys of deliveriesByExecution().values()) expect(new Set(keys).size).toBe(1);

    // The restarted replicas rejoin with no step of their own: the worker polls, nginx sends the serve
    // requests again.
    const restarted = JSON.parse(readFileSync(path.join(dir, "state.json"), "utf8")) as typeof state;
    const newServe = restarted.processes.find(
      (p) => p.name === "flowlog-serve-1",
    ) as (typeof state.processes)[0];
    expect(newServe.pid).not.toBe(serve.pid);
    expect((await fetch(worker.probeUrl)).status).toBe(200);
    const servedBy = async () => {
      const text = await (await fetch(newServe.probeUrl.replace("/readyz", "/metrics"))).text();
      return text
        .split("\n")
        .filter((line) => line.startsWith("flowlog_http_requests_total{") && line.includes('protocol="rest"'))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0);
    };
    const before = await servedBy();
    for (let i = 0; i < 10; i++) {
      const answer = await fetch(`${api}/api/v1/logs?workspaceId=${account.workspace.id}&limit=1`, {
        headers: { "x-api-key": account.key },
      });
      expect(answer.status).toBe(200);
    }
    expect(await servedBy()).toBeGreaterThan(before);
  }, 300_000);

  it("runs a worker of each role; with the deliveries' worker stopped, executions still run and are logged, and their deliveries go out once it is started again, each once (issue 51)", async () => {
    const state = JSON.parse(readFileSync(path.join(dir, "state.json"), "utf8")) as {
      processes: { name: string; pid: number; probeUrl: string }[];
    };
    const named = (name: string) =>
      state.processes.find((p) => p.name === name) as (typeof state.processes)[0];
    const executionsWorker = named("flowlog-worker-executions-1");
    const deliveriesWorker = named("flowlog-worker-deliveries-1");
    expect(await (await fetch(executionsWorker.probeUrl)).json()).toEqual({
      status: "ready",
      roles: ["executions"],
    });
    expect(await (await fetch(deliveriesWorker.probeUrl)).json()).toEqual({
      status: "ready",
      roles: ["deliveries"],
    });

    process.kill(deliveriesWorker.pid, "SIGTERM");
    // Its grace time is 30 s (worker.ts); with nothing in flight it exits within a second or two.
    await untilTrue(() => !isAlive(deliveriesWorker.pid), 60_000).catch((error: Error) => {
      const log = logTail(path.join(dir, "logs"), deliveriesWorker.name);
      throw new Error(`the deliveries' worker did not exit on SIGTERM (${error.message})${log}`);
    });
    const executed: string[] = [];
    for (let i = 0; i < 10; i++) {
      const answer = await post(`/api/v1/workflows/${workflowId}/execute`, { input: {} });
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      executed.push(answer.json.executionId as string);
    }
    const logged = new Set((await allEntries()).map((entry) => entry.executionId));
    expect(executed.filter((id) => !logged.has(id))).toEqual([]);
    await sleep(2_000);
    expect(executed.filter((id) => deliveriesByExecution().has(id))).toEqual([]);

    // What a supervisor does: start what stopped.
    await flowlog(upArgs);
    await untilTrue(() => executed.every((id) => deliveriesByExecution().has(id)), 60_000);
    for (const id of executed) expect(deliveriesByExecution().get(id)).toHaveLength(1);
  }, 300_000);

  it("recovers a subscription's failed deliveries through nginx, as a job of the deliveries' worker (D37, issue 51)", async () => {
    let receiving = false;
    // A 4xx fails a delivery at once (D19): no retry schedule to wait for.
    const refusing = await startReceiver((_request, response) =>
      sendJson(response, receiving ? 200 : 400, {}),
    );
    try {
      const notifications = `/api/v1/workspaces/${account.workspace.id}/notifications`;
      const subscribed = await post(notifications, {
        channel: "webhook",
        webhook: { url: refusing.origin },
        allWorkflows: true,
      });
      const subscriptionId = (subscribed.json.subscription as { id: string }).id;
      const since = new Date().toISOString();
      for (let i = 0; i < 3; i++) await post(`/api/v1/workflows/${workflowId}/execute`, { input: {} });
      const recover = (preview: boolean) =>
        post(`${notifications}/${subscriptionId}:recover`, { since, preview });
      // Four reads a second: each is a count, and each GetRecovery below a visibility query.
      await untilApi(
        "three failed deliveries",
        async () => ((await recover(true)).json.failed === 3 ? true : undefined),
        60_000,
      );
      const refused = refusing.received.map((request) => String(request.headers["idempotency-key"]));

      receiving = true;
      const started = await recover(false);
      expect(started.json.recovery).toMatchObject({ id: `recover-${subscriptionId}-1`, total: 3 });
      const recovery = await untilApi(
        "the recovery's end",
        async () => {
          const response = await fetch(`${api}${notifications}/${subscriptionId}/recovery`, {
            headers: { "x-api-key": account.key },
          });
          const { recovery } = (await response.json()) as { recovery: { status: string } };
          return recovery.status === "running" ? undefined : recovery;
        },
        60_000,
      );
      expect(recovery).toMatchObject({ status: "completed", succeeded: 3 });
      const resent = refusing.received.slice(refused.length);
      expect(resent.map((request) => String(request.headers["idempotency-key"])).sort()).toEqual(
        refused.sort(),
      );
    } finally {
      await refusing.close();
    }
  }, 120_000);
});

/** Whether a process of this machine still runs (a cluster's process is not this one's child). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface RecordedState {
  ports: { postgres: number; serve: number[]; workers: { executions: number[]; deliveries: number[] } };
  processes: { name: string; pid: number }[];
}

const recordedState = () => JSON.parse(readFileSync(path.join(dir, "state.json"), "utf8")) as RecordedState;

/** Another user of this machine, as which a child process is run (the tests run as root). */
const asStranger = (program: string, args: string[]) =>
  run("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", program, ...args], {
    cwd: repoRoot,
  });

/** A TCP connection to the cluster's PostgreSQL as `user` with `password`: its error code, or "connected". */
async function connectOverTcp(user: string, password: string, database = "postgres"): Promise<string> {
  const client = new pg.Client({
    host: "127.0.0.1",
    port: recordedState().ports.postgres,
    user,
    password,
    database,
  });
  try {
    await client.connect();
    return "connected";
  } catch (error) {
    return String((error as { code?: string }).code);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Listening TCP sockets of this machine, from /proc/net/tcp and tcp6: address, port and socket inode. */
function listeningSockets(): { address: string; port: number; inode: string }[] {
  return ["/proc/net/tcp", "/proc/net/tcp6"].flatMap((table) =>
    readFileSync(table, "utf8")
      .trim()
      .split("\n")
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[3] === "0A")
      .map((fields) => {
        const [address, port] = (fields[1] as string).split(":") as [string, string];
        return { address: addressOf(address), port: Number.parseInt(port, 16), inode: fields[9] as string };
      }),
  );
}

/**
 * The kernel prints an address as 32-bit words in host (little-endian) order: IPv4 dotted, IPv6 as its
 * eight groups uncompressed (`0:0:0:0:0:0:0:1` is ::1, all zeros every interface).
 */
function addressOf(hex: string): string {
  const bytes = Buffer.concat(
    (hex.match(/.{8}/g) as string[]).map((word) => Buffer.from(word, "hex").reverse()),
  );
  if (bytes.length === 4) return [...bytes].join(".");
  return Array.from({ length: 8 }, (_, n) => bytes.readUInt16BE(n * 2).toString(16)).join(":");
}

const isLoopback = (address: string) => address === "127.0.0.1" || address === "0:0:0:0:0:0:0:1";

/** The socket inodes a process holds open. */
function socketInodes(pid: number): string[] {
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    const target = (() => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return "";
      }
    })();
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    return inode ? [inode] : [];
  });
}

describe("flowlog cluster up trusts no other local user (issue 49)", () => {
  it("makes its directory its owner's alone and every file in it 0600", () => {
    expect(statSync(dir).mode & 0o7777).toBe(process.getuid?.() === 0 ? 0o711 : 0o700);
    // The socket's directory: reached by PostgreSQL's account alone.
    expect(statSync(path.join(dir, "postgres")).mode & 0o7777).toBe(0o700);
    for (const file of [
      "master.key",
      "postgres.password",
      "state.json",
      "env",
      "temporal/config/cluster.yaml",
      "nginx/nginx.conf",
      "logs/postgres.log",
      "logs/flowlog-serve-1.log",
    ]) {
      expect(statSync(path.join(dir, file)).mode & 0o7777, file).toBe(0o600);
    }
  });

  it("PostgreSQL asks every role for its password on TCP, and its socket is out of another user's reach", async () => {
    // A stranger on this machine, at the socket: its directory does not let them through.
    const socketConnect = `new (require("pg").Client)({ host: ${JSON.stringify(path.join(dir, "postgres"))},
      port: ${recordedState().ports.postgres}, user: "postgres", database: "postgres" }).connect()
      .then(() => { console.log("connected"); process.exit(0); }, (e) => { console.log(e.code); process.exit(0); });`;
    const { stdout } = await asStranger(process.execPath, ["-e", socketConnect]);
    expect(stdout.trim()).toBe("EACCES");
    // 28P01: invalid_password. The superuser has none at all: it comes through the socket only.
    expect(await connectOverTcp("flowlog", "guessed", "flowlog")).toBe("28P01");
    expect(await connectOverTcp(userInfo().username, "guessed")).toBe("28P01");

    const password = readFileSync(path.join(dir, "postgres.password"), "utf8").trim();
    expect(password).toMatch(/^[0-9a-f]{64}$/);
    expect(await connectOverTcp("flowlog", password, "flowlog")).toBe("connected");
  });

  it("no process of the cluster shows the database password on its command line", () => {
    const password = readFileSync(path.join(dir, "postgres.password"), "utf8").trim();
    const processes = recordedState().processes;
    expect(processes.map((p) => p.name)).toContain("temporal-server");
    for (const { name, pid } of processes) {
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      expect(commandLine.length, name).toBeGreaterThan(0);
      expect(commandLine, name).not.toContain(password);
    }
  });

  it("every part listens on loopback alone, the replicas' ports on 127.0.0.1 (D46)", () => {
    const state = recordedState();
    const sockets = listeningSockets();
    const { executions, deliveries } = state.ports.workers;
    for (const port of [...state.ports.serve, ...executions, ...deliveries]) {
      expect(
        sockets.filter((socket) => socket.port === port).map((socket) => socket.address),
        `port ${port}`,
      ).toEqual(["127.0.0.1"]);
    }
    // Every process the cluster started: PostgreSQL, Temporal's services and UI, nginx, the replicas.
    const byInode = new Map(sockets.map((socket) => [socket.inode, socket]));
    const listening = state.processes.flatMap(({ name, pid }) =>
      socketInodes(pid).flatMap((inode) => {
        const socket = byInode.get(inode);
        return socket ? [{ name, address: socket.address, port: socket.port }] : [];
      }),
    );
    expect(new Set(listening.map((socket) => socket.name)).size).toBe(state.processes.length);
    expect(listening.filter((socket) => !isLoopback(socket.address))).toEqual([]);
  });
});
