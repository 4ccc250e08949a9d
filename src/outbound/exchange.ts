import { fetch, type Headers, type Response } from "undici";
import { createOutboundDispatcher } from "./address-guard.js";
import { type ReplyLimit, readCapped } from "./capped-read.js";
import { OutboundFailure, outboundFailureOf } from "./failure.js";
import { nextHop, type OutboundRequest, type RedirectPolicy, redirectLocation } from "./redirects.js";

export type { OutboundRequest } from "./redirects.js";

export interface ExchangeOptions {
  /** D22: FLOWLOG_ALLOW_PRIVATE_NETWORKS, the only way past the address guard. */
  allowPrivateNetworks: boolean;
  /** For the whole exchange: every hop, and the reply's body read to its end or its limit. */
  timeoutMs: number;
  /** The caller's cancellation (an activity's): the exchange then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  replyLimit: ReplyLimit;
  /** Absent: a redirect is an answer like any other. */
  redirects?: RedirectPolicy | undefined;
}

/** The answer, its body decoded (gzip, br, deflate) and read no further than the limit. */
export interface OutboundReply {
  status: number;
  headers: Headers;
  body: Buffer;
  /** The body went on past a `cut` limit; what follows was not read. */
  cut: boolean;
}

/**
 * One outbound HTTP exchange: the only way blocks and channels reach another server, so each of them gets
 * the address guard (D22, judged on the address actually connected to), the redirect rules and the reply
 * limit (D26) without a way to leave one out. Rejects with an OutboundFailure, or with the caller's abort
 * reason when its signal fired.
 */
export async function exchange(request: OutboundRequest, options: ExchangeOptions): Promise<OutboundReply> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    const response = await fetchHops(request, signal, options);
    const { bytes, cut } = await readCapped(response.body, options.replyLimit);
    return { status: response.status, headers: response.headers, body: bytes, cut };
  } catch (error) {
    options.signal?.throwIfAborted();
    throw outboundFailureOf(error, timeout.aborted, options.timeoutMs);
  }
}

/** Redirects are followed here rather than by fetch, so that each hop goes through nextHop's rules. */
async function fetchHops(
  request: OutboundRequest,
  signal: AbortSignal,
  options: ExchangeOptions,
): Promise<Response> {
  const dispatcher = createOutboundDispatcher(options);
  let hop = request;
  for (let hops = 0; ; hops++) {
    const { method, url, headers, body } = hop;
    const response = await fetch(url, { method, headers, body, redirect: "manual", signal, dispatcher });
    const location = options.redirects ? redirectLocation(response.status, response.headers) : null;
    if (!options.redirects || location === null) return response;
    await response.body?.cancel();
    if (hops === options.redirects.maxHops) {
      throw new OutboundFailure("redirect_refused", `stopped after ${hops} redirects`);
    }
    hop = nextHop(hop, response.status, location, options.redirects);
  }
}
