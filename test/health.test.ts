import { execFile } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freePort } from "../src/util/free-port.js";
import { type ServeProcess, startServeProcess } from "./support/serve-process.js";
import { untilTrue } from "./support/until.js";

/**
 * Issue 16: the probes a load balancer asks `flowlog serve`, without a key. /healthz: the process is
 * alive. /readyz: it can serve now, i.e. its store and Temporal answer; otherwise 503 naming what failed.
 */

let connected: ServeProcess;
let cutOff: ServeProcess;

beforeAll(async () => {
  [connected, cutOff] = await Promise.all([
    startServeProcess(),
    // A Temporal address nothing listens on: the API still serves logs, but is not ready to run workflows.
    startServeProcess({ TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` }),
  ]);
});
afterAll(() => Promise.all([connected?.stop(), cutOff?.stop()]));

const probe = async (server: ServeProcess, path: string) => {
  const response = await fetch(`${server.url}${path}`);
  return {
    status: response.status,
    body: (await response.json()) as unknown,
    cache: response.headers.get("cache-control"),
  };
};

describe("health and readiness probes (issue 16)", () => {
  it("/healthz answers 200 without a key, whatever the dependencies", async () => {
    expect(await probe(connected, "/healthz")).toEqual({
      status: 200,
      body: { status: "ok" },
      cache: "no-store",
    });
    expect((await probe(cutOff, "/healthz")).status).toBe(200);
  });

  it("/readyz answers 200 when the store and Temporal answer", async () => {
    expect(await probe(connected, "/readyz")).toEqual({
      status: 200,
      body: { status: "ready" },
      cache: "no-store",
    });
  });

  it("/readyz answers 503 naming Temporal when it cannot be reached, and nothing of its address", async () => {
    const answer = await probe(cutOff, "/readyz");
    expect(answer).toEqual({
      status: 503,
      body: { status: "unready", failed: ["temporal"] },
      cache: "no-store",
    });
  });
});

describe("graceful shutdown (issue 16)", () => {
  it("on SIGTERM flowlog serve takes no new connection, answers the request in flight, then exits", async () => {
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
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.kill(server.pid, "SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Stopping: a new connection is refused.
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
    socket.write(body.slice(10));
    await untilTrue(() => answer.includes("\r\n\r\n"), 5_000);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
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
