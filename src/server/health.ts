import type { NodeRequest, NodeResponse } from "../gateway/rest-gateway.js";
import { requestUrl } from "../util/request-url.js";

/** One dependency the process needs to serve: its name, and a check that rejects when it is unreachable. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

/** A check that has not answered in this time counts as failed: a load balancer's probe must not hang. */
const checkTimeoutMs = 2_000;

/**
 * Issue 16: the probes of an operator's load balancer or orchestrator, unauthenticated and outside the
 * API's rate limits. `/healthz` says the process is alive (it answers at all); `/readyz` says it can serve
 * now, running every check at once (the store and Temporal for `flowlog serve`) and answering 503 naming
 * the ones that failed, so nginx or Kubernetes stops sending it requests until they pass. No check's
 * error text is shown: it may name hosts or users.
 */
export function createHealthRoutes(checks: readonly ReadinessCheck[]) {
  return async (req: NodeRequest, res: NodeResponse, url = requestUrl(req)): Promise<boolean> => {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const path = url.pathname;
    if (path === "/healthz") {
      answer(res, 200, { status: "ok" });
      return true;
    }
    if (path !== "/readyz") return false;
    const failed = (
      await Promise.all(checks.map(async ({ name, check }) => ((await passes(check)) ? [] : [name])))
    ).flat();
    answer(
      res,
      failed.length === 0 ? 200 : 503,
      failed.length === 0 ? { status: "ready" } : { status: "unready", failed },
    );
    return true;
  };
}

async function passes(check: () => Promise<void>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), checkTimeoutMs);
  });
  try {
    return await Promise.race([check().then(() => true as const), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

function answer(res: NodeResponse, status: number, body: object): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}
