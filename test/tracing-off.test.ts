import { describe, expect, it } from "vitest";
import { freePort } from "../src/util/free-port.js";
import { moduleCacheProbe } from "./support/module-cache.js";
import { startServeProcess } from "./support/serve-process.js";

/**
 * D50: while no OTLP endpoint is set, `flowlog serve` loads nothing of the OpenTelemetry SDK or its
 * exporter; set, it does. What a process loaded is read from its module cache at exit.
 */
async function modulesLoadedByServe(env: Record<string, string>): Promise<string[]> {
  const probe = moduleCacheProbe();
  const serve = await startServeProcess({ ...probe.env, ...env });
  // A call through the API, so what a request loads lazily is loaded too.
  expect((await fetch(`${serve.url}/healthz`)).status).toBe(200);
  await serve.stop();
  return probe.loaded();
}

const sdkParts = /node_modules\/@opentelemetry\/(sdk-[^/]+|exporter-[^/]+|resources|otlp-[^/]+)\//;

describe("tracing off (D50)", () => {
  it("flowlog serve without OTLP variables loads no part of the SDK; with them, it does", async () => {
    // Empty is unset (tracingRequested), whatever the test's own environment holds.
    const off = await modulesLoadedByServe({
      OTEL_EXPORTER_OTLP_ENDPOINT: "",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "",
    });
    expect(off.length).toBeGreaterThan(100);
    expect(off.filter((file) => sdkParts.test(file))).toEqual([]);

    const on = await modulesLoadedByServe({
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}`,
    });
    expect(on.filter((file) => sdkParts.test(file)).length).toBeGreaterThan(0);
  });
});
