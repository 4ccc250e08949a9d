import type { Config } from "../config/config.js";
import { startApiServer } from "../server/api-server.js";
import { untilStopSignal } from "./signals.js";

/** `flowlog serve` (D3): the API server alone, until SIGINT or SIGTERM. */
export async function runServe(config: Config): Promise<void> {
  const api = await startApiServer(config);
  console.log(
    `flowlog API at ${api.url} (gRPC, gRPC-Web, Connect and REST; OpenAPI at ${api.url}/api/v1/openapi.json)`,
  );
  await untilStopSignal();
  await api.close();
}
