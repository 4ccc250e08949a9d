import { useEffect, useState } from "preact/hooks";
import type { LogEntry } from "../../../gen/flowlog/logs/v1/log_entry_pb.js";
import { errorMessage } from "../api.js";
import { BulkRetrySection } from "../bulk-retry.js";
import { useSession } from "../context.js";
import { FilterForm } from "../filter-form.js";
import { formatCost, formatDuration, formatTime } from "../format.js";
import { KeysetPager } from "../keyset-pager.js";
import { filterParams, filtersFromParams } from "../log-filters.js";
import { navigate, type Route, routeHref } from "../router.js";
import { CallError, useCall } from "../use-call.js";
import { useWorkspaceCatalog } from "../use-workflows.js";

const pageSize = 50;
/** How many rows the live tail keeps on screen, and how soon it resumes a stream that ended. */
const tailKeeps = 500;
const resumeAfterMs = 1_000;

export function LogsPage({ route }: { route: Route }) {
  const { workspaceId } = useSession();
  const params = route.params;
  const filters = filterParams(params);
  const tailing = params.get("tail") === "1";
  const apply = (next: Record<string, string>, extra: Record<string, string> = {}) =>
    navigate(routeHref("logs", undefined, { ws: workspaceId, ...next, ...extra }));

  return (
    <section aria-labelledby="logs-title">
      <h1 id="logs-title">Logs</h1>
      <FilterForm params={params} onApply={(next) => apply(next, tailing ? { tail: "1" } : {})} />
      <p class="toolbar">
        <a href={routeHref("charts", undefined, { ws: workspaceId, ...filters })}>Charts of this view</a>
        <button
          type="button"
          aria-pressed={tailing}
          onClick={() => apply(filters, tailing ? {} : { tail: "1" })}
        >
          {tailing ? "Stop live tail" : "Live tail"}
        </button>
      </p>
      <BulkRetrySection params={params} />
      {tailing ? <LiveTail params={params} /> : <LogPages params={params} />}
    </section>
  );
}

/** Keyset pages (D8), newest first. */
function LogPages({ params }: { params: URLSearchParams }) {
  const { api, workspaceId } = useSession();
  const cursor = params.get("cursor") ?? undefined;
  const [page] = useCall(
    (signal) =>
      api.logs.listLogs(
        { workspaceId, ...filtersFromParams(params), cursor, limit: pageSize, details: "basic" },
        { signal },
      ),
    [workspaceId, params.toString()],
  );

  return (
    <>
      <CallError state={page} />
      <LogTable entries={page.value?.data ?? []} busy={page.status === "loading"} view={params} />
      <KeysetPager
        label="Pages"
        cursor={cursor}
        nextCursor={page.value?.nextCursor}
        hrefAt={(at) =>
          routeHref("logs", undefined, { ws: workspaceId, ...filterParams(params), cursor: at })
        }
      />
    </>
  );
}

/**
 * The live tail (D44): the newest page of the list, then every entry as it is written, from TailLogs'
 * stream, newest written first. The stream is opened before the page is read, so nothing written in
 * between is missed (an entry in both shows once). A stream that ends (the server restarting, the tab
 * falling behind) is resumed after its last token, losing nothing. The console reads the stream with its
 * Connect client rather than an EventSource: an EventSource cannot send the key's header, and the key
 * never goes in a URL or a cookie.
 */
function LiveTail({ params }: { params: URLSearchParams }) {
  const { api, workspaceId } = useSession();
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [error, setError] = useState<string>();
  useEffect(() => {
    const stop = new AbortController();
    let shown: LogEntry[] = [];
    const show = (fresh: LogEntry[]) => {
      const ids = new Set(fresh.map((entry) => entry.id));
      shown = [...fresh, ...shown.filter((entry) => !ids.has(entry.id))].slice(0, tailKeeps);
      setEntries(shown);
    };
    const filters = filtersFromParams(params);
    async function follow() {
      let resumeToken: string | undefined;
      let listed = false;
      while (!stop.signal.aborted) {
        try {
          const stream = api.logs.tailLogs(
            { workspaceId, ...filters, details: "basic", resumeToken },
            { signal: stop.signal },
          );
          for await (const message of stream) {
            resumeToken = message.resumeToken;
            if (message.entry) show([message.entry]);
            if (!listed) {
              listed = true;
              const first = await api.logs.listLogs({
                workspaceId,
                ...filters,
                limit: pageSize,
                details: "basic",
              });
              show(first.data);
            }
            setError(undefined);
          }
        } catch (caught) {
          if (stop.signal.aborted) return;
          setError(errorMessage(caught));
        }
        await new Promise((resolve) => setTimeout(resolve, resumeAfterMs));
      }
    }
    void follow();
    return () => stop.abort();
  }, [workspaceId, params.toString()]);
  return (
    <>
      <p class="live" role="status">
        Live: new entries appear at the top as they are written ({entries.length} shown).
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <LogTable entries={entries} busy={false} view={params} />
    </>
  );
}

/** `view` is the list's own URL parameters: an entry's page links back to the same filters and page. */
function LogTable({ entries, busy, view }: { entries: LogEntry[]; busy: boolean; view: URLSearchParams }) {
  const { workspaceId } = useSession();
  const listParams = Object.fromEntries(view);
  const catalog = useWorkspaceCatalog();
  return (
    <table class="logs" aria-busy={busy}>
      <caption class="visually-hidden">Log entries</caption>
      <thead>
        <tr>
          <th scope="col">Started</th>
          <th scope="col">Workflow</th>
          <th scope="col">Trigger</th>
          <th scope="col">Level</th>
          <th scope="col" class="number">
            Duration
          </th>
          <th scope="col" class="number">
            Cost
          </th>
          <th scope="col">Execution</th>
        </tr>
      </thead>
      <tbody>
        {entries.length === 0 && !busy && (
          <tr>
            <td colSpan={7}>No log entries match.</td>
          </tr>
        )}
        {entries.map((entry) => (
          <tr key={entry.id}>
            <td>
              <a
                href={routeHref("logs", entry.id, { ...listParams, ws: workspaceId })}
                title={entry.startedAt}
              >
                {formatTime(entry.startedAt)}
              </a>
            </td>
            <td>{entry.workflow?.name ?? catalog.value?.nameOf(entry.workflowId) ?? entry.workflowId}</td>
            <td>{entry.trigger}</td>
            <td>
              <span class={`level ${entry.level}`}>{entry.level}</span>
            </td>
            <td class="number">{formatDuration(entry.totalDurationMs)}</td>
            <td class="number">{formatCost(entry.cost?.total)}</td>
            <td>
              <code>{entry.executionId}</code>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
