import { useEffect, useState } from "preact/hooks";
import type { LogEntry } from "../../../gen/flowlog/logs/v1/log_entry_pb.js";
import { errorMessage } from "../api.js";
import { useSession } from "../context.js";
import { FilterForm } from "../filter-form.js";
import { formatCost, formatDuration, formatTime } from "../format.js";
import { KeysetPager } from "../keyset-pager.js";
import { filterParams, filtersFromParams } from "../log-filters.js";
import { navigate, type Route, routeHref } from "../router.js";
import { CallError, useCall } from "../use-call.js";
import { useWorkspaceCatalog } from "../use-workflows.js";

const pageSize = 50;
/** How often the live tail asks for what is new, and how many rows it keeps on screen. */
const tailEveryMs = 2_000;
const tailKeeps = 500;

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
 * The live tail: every couple of seconds, what started at or after the newest entry seen, in ascending
 * order (D8), shown newest first. Entries that share the newest's start time come again and are dropped.
 */
function LiveTail({ params }: { params: URLSearchParams }) {
  const { api, workspaceId } = useSession();
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [error, setError] = useState<string>();
  useEffect(() => {
    let stopped = false;
    let shown: LogEntry[] = [];
    const filters = filtersFromParams(params);
    async function poll() {
      try {
        const first = await api.logs.listLogs({ workspaceId, ...filters, limit: pageSize, details: "basic" });
        shown = first.data;
        setEntries(shown);
        while (!stopped) {
          await new Promise((resolve) => setTimeout(resolve, tailEveryMs));
          if (stopped) return;
          const since = shown[0]?.startedAt ?? filters.startDate;
          const seen = new Set(shown.map((entry) => entry.id));
          const fresh: LogEntry[] = [];
          let cursor: string | undefined;
          do {
            const page = await api.logs.listLogs({
              workspaceId,
              ...filters,
              startDate: since,
              order: "asc",
              cursor,
              limit: 100,
              details: "basic",
            });
            fresh.push(...page.data.filter((entry) => !seen.has(entry.id)));
            cursor = page.nextCursor;
          } while (cursor && !stopped && fresh.length < tailKeeps);
          if (fresh.length) {
            shown = [...fresh.reverse(), ...shown].slice(0, tailKeeps);
            setEntries(shown);
          }
          setError(undefined);
        }
      } catch (caught) {
        if (!stopped) setError(errorMessage(caught));
      }
    }
    void poll();
    return () => {
      stopped = true;
    };
  }, [workspaceId, params.toString()]);
  return (
    <>
      <p class="live" role="status">
        Live: new entries appear at the top every {tailEveryMs / 1_000} s ({entries.length} shown).
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
