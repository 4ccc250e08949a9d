import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../src/util/free-port.js";
import { resolveGrpcHealthProbe } from "./support/grpc-health-probe.js";
import { resolveGrpcurl } from "./support/grpcurl.js";
import { type ServeProcess, startServeProcess } from "./support/serve-process.js";
import { untilTrue } from "./support/until.js";

/**
 * Issue 16: the probes a load balancer asks `flowlog serve`, without a key. /healthz: the process is
 * alive. /readyz: it can serve now, i.e. its store and Temporal answer; otherwise 503 naming what failed.
 * D46: /readyz and /metrics are the operators' own: on the API port they answer the operator token or a
 * trusted proxy asking for itself, on the probe port anyone who can reach it (loopback by default).
 */

const operatorToken = "operator-token-for-the-probe-tests";
/** The address a test request comes from, trusted as a proxy by `behindProxy`. */
const loopback = "127.0.0.1";

let connected: ServeProcess;
let cutOff: ServeProcess;
let behindProxy: ServeProcess;

beforeAll(async () => {
  [connected, cutOff, behindProxy] = await Promise.all([
    startServeProcess({ FLOWLOG_OPERATOR_TOKEN: operatorToken }),
    // A Temporal address nothing listens on: the API still serves logs, but is not ready to run workflows.
    startServeProcess({ TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` }),
    startServeProcess({ FLOWLOG_TRUSTED_PROXIES: loopback }),
  ]);
});
afterAll(() => Promise.all([connected?.stop(), cutOff?.stop(), behindProxy?.stop()]));

const probe = async (base: string, path: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`${base}${path}`, { headers });
  const text = await response.text();
  return {
    status: response.status,
    body: response.headers.get("content-type")?.includes("json") ? (JSON.parse(text) as unknown) : text,
    cache: response.headers.get("cache-control"),
  };
};

describe("health and readiness probes (issue 16)", () => {
  it("/healthz answers 200 without a key on every port, whatever the dependencies", async () => {
    for (const base of [connected.url, connected.probeUrl, cutOff.url]) {
      expect(await probe(base, "/healthz"), base).toEqual({
        status: 200,
        body: { status: "ok" },
        cache: "no-store",
      });
    }
  });

  it("/readyz answers 200 when the store and Temporal answer", async () => {
    expect(await probe(connected.probeUrl, "/readyz")).toEqual({
      status: 200,
      body: { status: "ready" },
      cache: "no-store",
    });
  });

  it("/readyz answers 503 naming Temporal when it cannot be reached, and nothing of its address", async () => {
    const answer = await probe(cutOff.probeUrl, "/readyz");
    expect(answer).toEqual({
      status: 503,
      body: { status: "unready", failed: ["temporal"] },
      cache: "no-store",
    });
  });

  it("a call that needs Temporal while it cannot be reached is 503 unavailable naming it, not a 500", async () => {
    const printed = await promisify(execFile)(process.execPath, ["bin/flowlog.js", "bootstrap", "--json"], {
      env: { ...process.env, FLOWLOG_DATA_DIR: cutOff.dataDir },
    });
    const { key, workspace } = JSON.parse(printed.stdout) as { key: string; workspace: { id: string } };
    const call = async (method: string, apiPath: string, body: unknown) => {
      const response = await fetch(`${cutOff.url}${apiPath}`, {
        method,
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const created = await call("POST", `/api/v1/workspaces/${workspace.id}/workflows`, {
      name: "Needs Temporal",
      state: {
        blocks: {
          start: { type: "starter", name: "Start" },
          done: { type: "response", name: "Done", config: { data: { ok: true } } },
        },
        edges: [{ source: "start", target: "done" }],
      },
    });
    expect(created.status).toBe(200);
    const workflowId = (created.body.workflow as { id: string }).id;
    const executed = await call("POST", `/api/v1/workflows/${workflowId}/execute`, { input: {} });
    expect(executed).toMatchObject({
      status: 503,
      body: {
        code: "unavailable",
        detail: "the workflow engine (Temporal) cannot be reached; retry shortly",
      },
    });
  });
});

describe("operator surfaces on the public port (D46)", () => {
  it("the probe port listens on loopback only by default", () => {
    expect(new URL(connected.probeUrl).hostname).toBe("127.0.0.1");
  });

  it("refuses /readyz and /metrics to a stranger with 401 naming what they answer, and shows no figure", async () => {
    for (const path of ["/readyz", "/metrics"]) {
      const strangers: Record<string, string>[] = [
        {},
        { authorization: "Bearer not-the-operator-token" },
        { "x-api-key": "flk_x" },
      ];
      for (const headers of strangers) {
        const answer = await probe(connected.url, path, headers);
        expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(401);
        expect(JSON.stringify(answer.body)).toContain("operator token");
        expect(JSON.stringify(answer.body)).not.toContain("flowlog_");
      }
    }
  });

  it("answers /readyz and /metrics to the operator token", async () => {
    const headers = { authorization: `Bearer ${operatorToken}` };
    expect((await probe(connected.url, "/readyz", headers)).body).toEqual({ status: "ready" });
    const metrics = await probe(connected.url, "/metrics", headers);
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain("flowlog_http_requests_total");
  });

  it("answers a trusted proxy asking for itself, and refuses a stranger it forwards", async () => {
    expect((await probe(behindProxy.url, "/readyz")).status).toBe(200);
    expect((await probe(behindProxy.url, "/metrics")).status).toBe(200);
    const forwarded = { "x-forwarded-for": "203.0.113.7" };
    expect((await probe(behindProxy.url, "/readyz", forwarded)).status).toBe(401);
    expect((await probe(behindProxy.url, "/metrics", forwarded)).status).toBe(401);
  });

  it("a flood of probes is answered, and the API port keeps answering", async () => {
    const answers = await Promise.all(
      Array.from({ length: 300 }, () => probe(cutOff.probeUrl, "/readyz").then((answer) => answer.status)),
    );
    expect(new Set(answers)).toEqual(new Set([503]));
    expect((await probe(cutOff.url, "/healthz")).status).toBe(200);
  });
});

describe("graceful shutdown (issue 16)", () => {
  it("on SIGTERM flowlog serve takes no new connection nor a new request on a kept one, answers the request in flight, then exits", async () => {
    const server = await startServeProcess({
      FLOWLOG_OPERATOR_TOKEN: "operator-token-for-the-drain-test",
    });
    const port = Number(new URL(server.url).port);
    // A request in flight: its headers are in, its body still coming when the signal arrives.
    const body = JSON.stringify({ email: "drain@example.test", plan: "pro" });
    const socket = net.connect(port, "127.0.0.1");
    await once(socket, "connect");
    socket.write(
      "POST /api/v1/admin/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
        `Authorization: Bearer operator-token-for-the-drain-test\r\nContent-Length: ${body.length}\r\n\r\n` +
        body.slice(0, 10),
    );
    let answer = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => {
      answer += chunk;
    });
    // A kept-alive HTTP/1.1 connection between requests, and an HTTP/2 session, as a load balancer holds them.
    const kept = net.connect(port, "127.0.0.1");
    await once(kept, "connect");
    kept.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    await once(kept, "data");
    let keptClosed = false;
    kept.once("close", () => {
      keptClosed = true;
    });
    const session = http2.connect(`http://127.0.0.1:${port}`);
    const first = session.request({ ":path": "/healthz" });
    first.resume();
    await once(first, "end");
    let wentAway = false;
    session.once("goaway", () => {
      wentAway = true;
    });
    session.on("error", () => {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.kill(server.pid, "SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Stopping: a new connection is refused, the idle kept one closed, the session told to go away.
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    expect(keptClosed, "the idle kept-alive connection is closed").toBe(true);
    expect(wentAway, "the HTTP/2 session is sent GOAWAY").toBe(true);
    session.destroy();
    socket.write(body.slice(10));
    await untilTrue(() => answer.includes("\r\n\r\n"), 5_000);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    // The connection the answer went on is not offered for another request.
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    await server.stop();
  });
});

describe("start-up", () => {
  it("a port another process holds stops flowlog serve with one line naming PORT, exit 2, no stack trace", async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, resolve));
    const { port } = holder.address() as net.AddressInfo;
    const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-port-"));
    try {
      const started = await promisify(execFile)(process.execPath, ["bin/flowlog.js", "serve"], {
        env: {
          ...process.env,
          PORT: String(port),
          FLOWLOG_DATA_DIR: dataDir,
          TEMPORAL_ADDRESS: inject("temporalAddress"),
          TEMPORAL_NAMESPACE: inject("temporalNamespace"),
        },
        timeout: 30_000,
      }).then(
        () => ({ code: 0, stderr: "" }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
      expect(started.code).toBe(2);
      expect(started.stderr).toContain(`PORT: port ${port} is already in use by another process`);
      expect(started.stderr).not.toMatch(/^\s+at /m);
    } finally {
      holder.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** A command's exit code and output; a non-zero exit is an answer here, not a failure. */
async function run(command: string, args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args, { timeout: 20_000 });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, out: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

describe("the standard gRPC health protocol on the API port (issue 55)", () => {
  const address = (serve: ServeProcess) => new URL(serve.url).host;

  it("grpc-health-probe, as Kubernetes runs it, finds the server and each service serving, without a key", async () => {
    const healthProbe = await resolveGrpcHealthProbe();
    for (const service of ["", "flowlog.logs.v1.LogsService", "flowlog.workflows.v1.WorkflowsService"]) {
      const answer = await run(healthProbe, [`-addr=${address(connected)}`, `-service=${service}`]);
      expect(answer, service).toEqual({ code: 0, out: expect.stringContaining("SERVING") });
    }
  });

  it("answers NOT_SERVING while Temporal cannot be reached, as /readyz does", async () => {
    const healthProbe = await resolveGrpcHealthProbe();
    // The verdict waits up to the readiness checks' 2 s bound for an unreachable dependency: a probe's
    // timeout must be longer than that (operations.md), where the probe's own default is 1 s.
    const answer = await run(healthProbe, [`-addr=${address(cutOff)}`, "-rpc-timeout=5s"]);
    // grpc-health-probe's exit code for an unhealthy answer.
    expect(answer).toEqual({ code: 4, out: expect.stringContaining("NOT_SERVING") });
  });

  it("a service it does not serve is NOT_FOUND to Check, and SERVICE_UNKNOWN to Watch", async () => {
    const healthProbe = await resolveGrpcHealthProbe();
    const checked = await run(healthProbe, [`-addr=${address(connected)}`, "-service=no.such.Service"]);
    // 3: the RPC failed (NotFound), as the protocol asks of Check.
    expect(checked.code).toBe(3);
    expect(checked.out).toMatch(/NotFound/i);

    const grpcurl = await resolveGrpcurl();
    const watched = await run(grpcurl, [
      "-plaintext",
      "-max-time=3",
      '-d={"service": "no.such.Service"}',
      address(connected),
      "grpc.health.v1.Health/Watch",
    ]);
    expect(watched.out).toContain('"status": "SERVICE_UNKNOWN"');
  });

  it("Watch streams the verdict, and List names every service; reflection describes the health service", async () => {
    const grpcurl = await resolveGrpcurl();
    const watched = await run(grpcurl, [
      "-plaintext",
      "-max-time=3",
      "-d={}",
      address(cutOff),
      "grpc.health.v1.Health/Watch",
    ]);
    // One answer while nothing changes: a Watch speaks on a change only.
    expect(watched.out.match(/"status": "NOT_SERVING"/g)).toHaveLength(1);

    const listed = await run(grpcurl, [
      "-plaintext",
      "-d={}",
      address(connected),
      "grpc.health.v1.Health/List",
    ]);
    expect(listed.code).toBe(0);
    const statuses = (JSON.parse(listed.out) as { statuses: Record<string, { status: string }> }).statuses;
    expect(Object.keys(statuses)).toEqual(
      expect.arrayContaining(["", "grpc.health.v1.Health", "flowlog.logs.v1.LogsService"]),
    );
    expect(new Set(Object.values(statuses).map((entry) => entry.status))).toEqual(new Set(["SERVING"]));

    const services = await run(grpcurl, ["-plaintext", address(connected), "list"]);
    expect(services.out).toContain("grpc.health.v1.Health");
  });
});

describe("gRPC health Watch over a dependency that goes away (issue 55)", () => {
  it("streams SERVING, then NOT_SERVING once Temporal cannot be reached, then SERVING when it is back", async () => {
    // Temporal behind a TCP relay on loopback: closing the relay cuts flowlog off the real server.
    const temporalAddress = new URL(`http://${inject("temporalAddress")}`);
    const sockets = new Set<net.Socket>();
    let relaying = true;
    const relay = net.createServer((client) => {
      if (!relaying) return client.destroy();
      const upstream = net.connect(Number(temporalAddress.port), temporalAddress.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on("close", () => sockets.delete(socket)).on("error", () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    relay.listen(0, "127.0.0.1");
    await once(relay, "listening");
    const relayPort = (relay.address() as net.AddressInfo).port;
    const serve = await startServeProcess({ TEMPORAL_ADDRESS: `127.0.0.1:${relayPort}` });
    try {
      const grpcurl = await resolveGrpcurl();
      const watching = run(grpcurl, [
        "-plaintext",
        "-max-time=40",
        "-d={}",
        new URL(serve.url).host,
        "grpc.health.v1.Health/Watch",
      ]);
      await untilTrue(async () => (await probe(serve.probeUrl, "/readyz")).status === 200, 15_000);
      await sleep(1_500);
      relaying = false;
      for (const socket of sockets) socket.destroy();
      await untilTrue(async () => (await probe(serve.probeUrl, "/readyz")).status === 503, 15_000);
      await sleep(1_500);
      relaying = true;
      await untilTrue(async () => (await probe(serve.probeUrl, "/readyz")).status === 200, 20_000);
      await sleep(1_500);
      await serve.stop();
      const watched = await watching;
      expect(watched.out.match(/"status": "\w+"/g)).toEqual([
        '"status": "SERVING"',
        '"status": "NOT_SERVING"',
        '"status": "SERVING"',
      ]);
    } finally {
      await serve.stop();
      relay.close();
      for (const socket of sockets) socket.destroy();
    }
  }, 90_000);
});
