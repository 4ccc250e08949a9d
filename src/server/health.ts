import type { NodeRequest, NodeResponse } from "../rpc/node-http.js";
import { requestUrl } from "../util/request-url.js";

/** One dependency the process needs to serve: its name, and a check that rejects when it is unreachable. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

/** A check that has not answered in this time counts as failed: a load balancer's probe must not hang. */
const checkTimeoutMs = 2_000;

/** D46: how long one verdict answers every probe, so that a flood of probes costs one look a second. */
const verdictLifetimeMs = 1_000;

/**
 * Whether the process can serve now: every check run at once, and the verdict shared (D46). Probes that
 * arrive while the checks run wait for that same run; a verdict is reused for a second after it is known,
 * so however many probes arrive, the store and Temporal are asked at most once a second.
 */
export class Readiness {
  private verdict: Promise<string[]> | undefined;
  private knownAt = 0;

  constructor(
    private readonly checks: readonly ReadinessCheck[],
    private readonly clock: () => number = Date.now,
  ) {}

  /** The names of the checks that failed; none means ready. */
  failed(): Promise<string[]> {
    if (this.verdict && (this.knownAt === 0 || this.clock() - this.knownAt < verdictLifetimeMs)) {
      return this.verdict;
    }
    this.knownAt = 0;
    const verdict = Promise.all(
      this.checks.map(async ({ name, check }) => ((await passes(check)) ? [] : [name])),
    ).then((names) => names.flat());
    this.verdict = verdict;
    void verdict.then(() => {
      if (this.verdict === verdict) this.knownAt = this.clock();
    });
    return verdict;
  }
}

/**
 * Issue 16: the probes of an operator's load balancer or orchestrator, outside the API's rate limits.
 * `/healthz` says the process is alive (it answers at all); `/readyz` says it can serve now (Readiness)
 * and answers 503 naming the checks that failed, so nginx or Kubernetes stops sending it requests until
 * they pass. No check's error text is shown: it may name hosts or users. `identity` is what the process
 * is, shown beside either verdict (a worker's roles, issue 51).
 */
export function createHealthRoutes(readiness: Readiness, identity: Record<string, unknown> = {}) {
  return async (req: NodeRequest, res: NodeResponse, url = requestUrl(req)): Promise<boolean> => {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const path = url.pathname;
    if (path === "/healthz") {
      answer(res, 200, { status: "ok" });
      return true;
    }
    if (path !== "/readyz") return false;
    const failed = await readiness.failed();
    answer(
      res,
      failed.length === 0 ? 200 : 503,
      failed.length === 0 ? { status: "ready", ...identity } : { status: "unready", failed, ...identity },
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
