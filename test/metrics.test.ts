import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProcessMetrics } from "../src/logging/metrics.js";
import { LogsStore } from "../src/store/logs-store.js";
import { openStore } from "../src/store/store.js";
import { freePort } from "../src/util/free-port.js";
import { h2Requests } from "./support/http2-burst.js";
import { type ServeProcess, startServeProcess } from "./support/serve-process.js";

/**
 * Issue 16 (D32): every process answers Prometheus on `/metrics`, and `flowlog worker`, which has no API
 * port, answers its probes and metrics on FLOWLOG_WORKER_PORT from the moment it starts.
 */

const repoRoot = path.resolve(import.meta.dirname, "..");

const planLimits = JSON.stringify({ free: { api: { requestsPerMinute: 1, maxBurst: 2 } } });

let serve: ServeProcess;
beforeAll(async () => {
  // A free plan's API bucket of two, so a third request is refused.
  serve = await startServeProcess({ FLOWLOG_PLAN_LIMITS: planLimits });
});
afterAll(() => serve?.stop());

/** The value of one series in Prometheus's text format, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const line = text
    .split("\n")
    .find(
      (l) =>
        l.startsWith(`${name}{`) &&
        Object.entries(labels).every(([key, value]) => l.includes(`${key}="${value}"`)),
    );
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

const scrape = async (url: string) => {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
};

describe("flowlog serve's /metrics (issue 16)", () => {
  it("shows the process's own figures, labelled with its component", async () => {
    const text = await scrape(serve.probeUrl);
    expect(sample(text, "flowlog_process_cpu_seconds_total", { component: "serve" })).toBeGreaterThan(0);
    expect(sample(text, "flowlog_process_resident_memory_bytes", { component: "serve" })).toBeGreaterThan(0);
    expect(text).toContain("flowlog_nodejs_eventloop_lag_seconds");
  });

  it("counts requests by protocol and status, and never labels a path, an id or a key", async () => {
    const before = await scrape(serve.probeUrl);
    const secretId = "log_metrics_probe_6f1c0a";
    const answers = await Promise.all([
      fetch(`${serve.url}/api/v1/logs/${secretId}`, { headers: { "x-api-key": "flk_not_a_real_key_0000" } }),
      fetch(`${serve.url}/api/v1/logs/${secretId}`),
      fetch(`${serve.url}/flowlog.logs.v1.LogsService/GetLog`, {
        method: "POST",
        headers: { "content-type": "application/json", "connect-protocol-version": "1" },
        body: JSON.stringify({ id: secretId }),
      }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401]);
    const after = await scrape(serve.probeUrl);
    const count = (text: string, protocol: string) =>
      sample(text, "flowlog_http_requests_total", { protocol, status: "401" });
    expect(count(after, "rest") - count(before, "rest")).toBe(2);
    expect(count(after, "connect") - count(before, "connect")).toBe(1);
    expect(
      sample(after, "flowlog_http_request_duration_seconds_count", { protocol: "rest" }),
    ).toBeGreaterThanOrEqual(2);
    expect(after).not.toContain(secretId);
    expect(after).not.toContain("flk_not_a_real_key");
  });
});

describe("flowlog serve counts RPCs, refusals and store calls (issue 16)", () => {
  it("by procedure, protocol and code, the API bucket's refusals apart, and the store's calls by area", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["bin/flowlog.js", "bootstrap", "--plan", "free", "--json"],
      {
        cwd: repoRoot,
        env: { ...process.env, FLOWLOG_DATA_DIR: serve.dataDir, FLOWLOG_PLAN_LIMITS: planLimits },
      },
    );
    const account = JSON.parse(stdout) as { key: string; workspace: { id: string } };
    const before = await scrape(serve.probeUrl);
    const list = (protocol: "rest" | "connect") =>
      protocol === "rest"
        ? fetch(`${serve.url}/api/v1/logs?workspaceId=${account.workspace.id}`, {
            headers: { "x-api-key": account.key },
          })
        : fetch(`${serve.url}/flowlog.logs.v1.LogsService/ListLogs`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": account.key },
            body: JSON.stringify({ workspaceId: account.workspace.id }),
          });
    const statuses = [
      (await list("rest")).status,
      (await list("connect")).status,
      (await list("rest")).status,
    ];
    expect(statuses).toEqual([200, 200, 429]);
    const after = await scrape(serve.probeUrl);
    const grew = (name: string, labels: Record<string, string>) =>
      sample(after, name, labels) - sample(before, name, labels);
    const procedure = "flowlog.logs.v1.LogsService/ListLogs";
    expect(grew("flowlog_rpc_requests_total", { procedure, protocol: "rest", code: "ok" })).toBe(1);
    expect(grew("flowlog_rpc_requests_total", { procedure, protocol: "connect", code: "ok" })).toBe(1);
    expect(
      grew("flowlog_rpc_requests_total", { procedure, protocol: "rest", code: "resource_exhausted" }),
    ).toBe(1);
    expect(grew("flowlog_rate_limit_refusals_total", { limit: "api" })).toBe(1);
    expect(grew("flowlog_rpc_duration_seconds_count", { procedure, protocol: "rest" })).toBe(1);
    expect(grew("flowlog_rpc_duration_seconds_count", { procedure, protocol: "connect" })).toBe(1);
    expect(grew("flowlog_store_call_duration_seconds_count", { area: "logs", method: "list" })).toBe(2);
    expect(after).not.toContain(account.key);
    expect(after).not.toContain(account.workspace.id);
  });

  it("counts the failed-authentication throttle's refusals, at admission and around a webhook's call (D26)", async () => {
    const before = await scrape(serve.probeUrl);
    // 30 guesses of a webhook token at once: 20 are tried, 10 wait for them and are refused in the call.
    const guess = { ":method": "POST", ":path": "/api/v1/webhooks/wf_x/whk_guess", body: "{}" };
    const statuses = await h2Requests(serve.url, "127.0.0.95", 30, guess);
    expect(statuses.filter((status) => status === 429)).toHaveLength(10);
    // The next is refused at admission, before its body is read.
    expect(await h2Requests(serve.url, "127.0.0.95", 1, guess)).toEqual([429]);
    const after = await scrape(serve.probeUrl);
    const grew =
      sample(after, "flowlog_rate_limit_refusals_total", { limit: "failed_authentications" }) -
      sample(before, "flowlog_rate_limit_refusals_total", { limit: "failed_authentications" });
    expect(grew).toBe(11);
  });
});

describe("the store's calls, timed (issues 13 and 16)", () => {
  it("counts each call once it settles and hands the caller the call's own answer or rejection", async () => {
    const store = openStore({ dataDir: mkdtempSync(path.join(tmpdir(), "flowlog-metrics-")) });
    const metrics = new ProcessMetrics("serve");
    const observed = metrics.observeStore(store);
    // The timed area is the area's own methods run on the area itself, which stays what it was.
    expect(observed.logs).toBeInstanceOf(LogsStore);
    expect(await observed.logs.getEntryView("log_absent_from_this_store")).toBeUndefined();
    await store.close();
    // A call that fails still counts, and its caller (not the timer) gets the rejection: an unhandled
    // rejection on the timer's side would fail this test run.
    await expect(observed.accounts.isMember("usr_x", "ws_x")).rejects.toThrow(/not open/);
    const server = createServer((req, res) => void metrics.answer(req, res));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      const text = await scrape(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      const calls = (area: string, method: string) =>
        sample(text, "flowlog_store_call_duration_seconds_count", { area, method });
      expect(calls("logs", "getEntryView")).toBe(1);
      expect(calls("accounts", "isMember")).toBe(1);
    } finally {
      server.close();
    }
  });
});

describe("flowlog worker's probes and metrics (issue 16)", () => {
  let worker: ChildProcessWithoutNullStreams | undefined;
  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      worker.kill("SIGTERM");
      await once(worker, "exit");
    }
  });

  it("answers from the start, and is unready naming Temporal while Temporal cannot be reached; it names its roles (issue 51); it stops on SIGTERM", async () => {
    // Nothing listens at this address: the worker keeps trying, and says so on /readyz.
    const unreachable = `127.0.0.1:${await freePort()}`;
    worker = spawn(process.execPath, ["bin/flowlog.js", "worker"], {
      cwd: repoRoot,
      env: {
        ...process.env,
        FLOWLOG_DATA_DIR: mkdtempSync(path.join(tmpdir(), "flowlog-worker-")),
        FLOWLOG_WORKER_PORT: "0",
        FLOWLOG_LOG_LEVEL: "error",
        TEMPORAL_ADDRESS: unreachable,
        FLOWLOG_WORKER_ROLES: "deliveries",
      },
    });
    let output = "";
    worker.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    const started = () => /probes and metrics at (http:\/\/\S+) /.exec(output)?.[1];
    await expect.poll(started, { timeout: 30_000 }).toBeTruthy();
    const url = started() as string;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "unready", failed: ["temporal"], roles: ["deliveries"] });
    const text = await scrape(url);
    expect(sample(text, "flowlog_process_cpu_seconds_total", { component: "worker" })).toBeGreaterThan(0);
    expect(sample(text, "flowlog_worker_role", { role: "deliveries" })).toBe(1);
    expect(text).not.toMatch(/^flowlog_worker_role\{[^}]*role="executions"/m);
    expect(text).not.toContain(unreachable);
    expect((await fetch(`${url}/api/v1/logs`)).status).toBe(404);
    worker.kill("SIGTERM");
    const [code] = await once(worker, "exit");
    expect(code).toBe(0);
  });
});
