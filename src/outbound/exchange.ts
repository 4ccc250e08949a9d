import { fetch, type Headers, type Response } from "undici";
import { failSpan, injectTraceContext, inSpan, SpanKind } from "../logging/tracing.js";
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
  /**
   * D50: send the current span's W3C trace context (`traceparent`) with the request, when tracing is on:
   * the HTTP block does, a webhook when its subscription asks.
   */
  propagateTrace?: boolean | undefined;
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
 * reason when its signal fired. With tracing on it is a client span (D50), whose attributes name the
 * method, the scheme, host and port, the status and the failure's kind: never the path or the query,
 * where a `{{secret}}` may have been written (D24), nor a header.
 */
export function exchange(request: OutboundRequest, options: ExchangeOptions): Promise<OutboundReply> {
  const { url } = request;
  const attributes = {
    "http.request.method": request.method,
    "url.scheme": url.protocol.slice(0, -1),
    "server.address": url.hostname,
    "server.port": Number(url.port) || (url.protocol === "https:" ? 443 : 80),
  };
  const errorType = (error: unknown) => (error instanceof OutboundFailure ? error.kind : "cancelled");
  return inSpan(request.method, { kind: SpanKind.CLIENT, attributes, errorType }, async (span) => {
    if (options.propagateTrace) injectTraceContext(request.headers);
    const reply = await exchangeOnce(request, options);
    span?.setAttribute("http.response.status_code", reply.status);
    if (reply.status >= 400) failSpan(span, String(reply.status));
    return reply;
  });
}

async function exchangeOnce(request: OutboundRequest, options: ExchangeOptions): Promise<OutboundReply> {
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
