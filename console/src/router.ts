import { useEffect, useState } from "preact/hooks";

/**
 * Hash routes (`#/logs/<id>?ws=…&level=error`): the server answers one document at `/` and every view,
 * its filters included, is in the URL, so a view can be bookmarked and shared.
 */
export interface Route {
  /** The first path segment: logs, charts, deliveries, subscriptions, workflows; empty for the root. */
  page: string;
  /** The second segment, where a page shows one thing (an entry, a delivery, a subscription). */
  id: string | undefined;
  params: URLSearchParams;
}

export function parseRoute(hash: string): Route {
  const text = hash.replace(/^#\/?/, "");
  const [path = "", query = ""] = splitOnce(text, "?");
  const [page = "", id] = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { page, id, params: new URLSearchParams(query) };
}

/** The href of a view: `#/page[/id][?params]`, empty params left out. */
export function routeHref(page: string, id?: string, params?: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params ?? {})) if (value) query.set(name, value);
  const path = id === undefined ? page : `${page}/${encodeURIComponent(id)}`;
  const search = query.toString();
  return `#/${path}${search ? `?${search}` : ""}`;
}

/** Moves to a view; `state` rides on the history entry (the logs page's trail of earlier cursors). */
export function navigate(href: string, { replace = false, state = null as unknown } = {}): void {
  if (replace) history.replaceState(state, "", href);
  else history.pushState(state, "", href);
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    window.addEventListener("hashchange", changed);
    window.addEventListener("popstate", changed);
    return () => {
      window.removeEventListener("hashchange", changed);
      window.removeEventListener("popstate", changed);
    };
  }, []);
  return parseRoute(hash);
}

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at < 0 ? [text, ""] : [text.slice(0, at), text.slice(at + 1)];
}
