import { Headers } from "undici";
import { OutboundFailure } from "./failure.js";
import { parseOutboundUrl } from "./url-policy.js";

/** A request as it goes out on one hop. */
export interface OutboundRequest {
  method: string;
  url: URL;
  headers: Headers;
  body?: string | undefined;
}

/**
 * Whether and how redirects are followed. Only the HTTP-request block follows them (D16); for webhooks and
 * chat a redirect is the answer (D19), and the agent's key goes to its provider only.
 */
export interface RedirectPolicy {
  /** Hops followed before the exchange fails: a longer chain is a loop or a misconfiguration. */
  maxHops: number;
  /** Lower-case names of the headers whose value came from a `{{secret}}`: they stay with their origin (D24). */
  secretHeaders: ReadonlySet<string>;
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);
/** The fetch standard's credentials, dropped on a cross-origin hop even when written without a secret. */
const credentialHeaders = ["authorization", "cookie", "proxy-authorization"];
const bodyHeaders = [
  "content-type",
  "content-length",
  "content-encoding",
  "content-language",
  "content-location",
];

/** The target of a redirect answer, or null for any other answer. */
export function redirectLocation(status: number, headers: Headers): string | null {
  return redirectStatuses.has(status) ? headers.get("location") : null;
}

/**
 * The next hop, by the fetch standard's rules (303, and 301/302 after POST, become a GET without body) and
 * issue 11's: a hop to another origin takes neither the credentials nor the secret headers nor the body (a
 * 307/308 would otherwise re-send it to whoever the first server names), and https never redirects to http,
 * which would put both on the wire in clear. Every hop's address is judged again by the dispatcher (D22).
 */
export function nextHop(
  previous: OutboundRequest,
  status: number,
  location: string,
  policy: RedirectPolicy,
): OutboundRequest {
  const url = parseOutboundUrl(location, previous.url);
  if (!(url instanceof URL)) throw new OutboundFailure("redirect_refused", `redirect target ${url.problem}`);
  if (previous.url.protocol === "https:" && url.protocol === "http:") {
    throw new OutboundFailure("redirect_refused", "redirect from https to http refused");
  }
  const headers = new Headers(previous.headers);
  const crossOrigin = url.origin !== previous.url.origin;
  if (crossOrigin) for (const name of [...credentialHeaders, ...policy.secretHeaders]) headers.delete(name);
  const becomesGet =
    (status === 303 && previous.method !== "GET") ||
    ((status === 301 || status === 302) && previous.method === "POST");
  const keepsBody = !becomesGet && !crossOrigin;
  if (!keepsBody) for (const name of bodyHeaders) headers.delete(name);
  return {
    method: becomesGet ? "GET" : previous.method,
    url,
    headers,
    body: keepsBody ? previous.body : undefined,
  };
}
