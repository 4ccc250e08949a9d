import { Code, ConnectError, createContextKey } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { TooManyFailedAuthentications } from "../limits/failed-authentication-throttle.js";
import { type ProcessMetrics, secondsSince } from "../logging/metrics.js";
import { type FrontDoor, procedureOf, protocolKey } from "./front-door.js";

/** Set on a request the door refused: its answer is counted once, at the refusal. */
const refusedKey = createContextKey(false, { description: "refusal counted" });

/**
 * The front door, with every answer counted by procedure, protocol and code (issue 16): a refusal
 * where the door gives it (REST answers some before any handler runs), everything else around the
 * handler, whose time is observed too. A 429 is the failed-authentication throttle's (D26) when it says
 * so by its type, at admission or around a webhook's call; any other at admission is the API bucket's (D11).
 */
export function observedFrontDoor(door: FrontDoor, metrics: ProcessMetrics): FrontDoor {
  return {
    async admit(request) {
      const refusal = await door.admit(request);
      if (refusal) {
        request.contextValues.set(refusedKey, true);
        metrics.rpcAnswered(
          procedureOf(request.method),
          request.contextValues.get(protocolKey),
          codeToString(refusal.code),
        );
        if (refusal instanceof TooManyFailedAuthentications) metrics.refused("failed_authentications");
        else if (refusal.code === Code.ResourceExhausted) metrics.refused("api");
      }
      return refusal;
    },
    interceptor: (next) => {
      const inner = door.interceptor(next);
      return async (request) => {
        if (request.contextValues.get(refusedKey)) return inner(request);
        const procedure = procedureOf(request.method);
        const protocol = request.contextValues.get(protocolKey);
        const started = process.hrtime.bigint();
        try {
          const response = await inner(request);
          metrics.rpcAnswered(procedure, protocol, "ok", secondsSince(started));
          return response;
        } catch (error) {
          const code = codeToString(ConnectError.from(error).code);
          metrics.rpcAnswered(procedure, protocol, code, secondsSince(started));
          // The inbound webhook's attempt is taken around its call, so its throttle refuses it here.
          if (error instanceof TooManyFailedAuthentications) metrics.refused("failed_authentications");
          throw error;
        }
      };
    },
  };
}
