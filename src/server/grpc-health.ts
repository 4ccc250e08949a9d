import { setTimeout as sleep } from "node:timers/promises";
import { create, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import {
  Health,
  HealthCheckResponseSchema,
  HealthListResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../gen/health/v1/health_pb.js";
import type { Readiness } from "./health.js";

/** How often a Watch looks at the readiness verdict, which itself is computed at most once a second (D46). */
const watchIntervalMs = 1_000;

/**
 * The standard gRPC health protocol (`grpc.health.v1.Health`, issue 55), as Kubernetes' gRPC probes, Envoy
 * and gRPC load balancers ask it: `Check`, `Watch` and `List`, for the whole server (the empty name) and
 * for each served service by its full name, each answered from the same verdict as `/readyz`: a service
 * is as ready as the process (a verdict per service would have to follow each method's needs, and a
 * probe routes whole processes). The answer is a status and nothing else, so it needs no key: what
 * failed is `/readyz`'s to say, to an operator (D46). A name the server does not serve is `not_found` to `Check`, and
 * `SERVICE_UNKNOWN` to `Watch`, which keeps watching as the protocol asks.
 *
 * Watch streams end when `stopped` aborts (the server closing), so they never hold up a drain.
 */
export function registerGrpcHealth(
  router: ConnectRouter,
  services: readonly DescService[],
  readiness: Readiness,
  stopped: AbortSignal,
): void {
  const names = new Set(["", Health.typeName, ...services.map((service) => service.typeName)]);
  const status = async (service: string) => {
    if (!names.has(service)) return ServingStatus.SERVICE_UNKNOWN;
    return (await readiness.failed()).length === 0 ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  };
  router.service(Health, {
    async check({ service }) {
      const answer = await status(service);
      if (answer === ServingStatus.SERVICE_UNKNOWN) {
        throw new ConnectError(`no service named "${service}" is served here`, Code.NotFound);
      }
      return { status: answer };
    },
    async *watch({ service }, context) {
      const ended = AbortSignal.any([context.signal, stopped]);
      let last: ServingStatus | undefined;
      while (!ended.aborted) {
        const now = await status(service);
        if (now !== last) yield { status: now };
        last = now;
        await sleep(watchIntervalMs, undefined, { signal: ended }).catch(() => undefined);
      }
    },
    async list() {
      const now = await status("");
      return create(HealthListResponseSchema, {
        statuses: Object.fromEntries(
          [...names].map((name) => [name, create(HealthCheckResponseSchema, { status: now })]),
        ),
      });
    },
  });
}
