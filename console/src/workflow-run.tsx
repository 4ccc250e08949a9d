import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { useEffect, useRef, useState } from "preact/hooks";
import type { LogEntry } from "../../gen/flowlog/logs/v1/log_entry_pb.js";
import type { Workflow } from "../../gen/flowlog/workflows/v1/workflow_pb.js";
import type { ExecuteWorkflowResponse } from "../../gen/flowlog/workflows/v1/workflows_service_pb.js";
import { errorMessage } from "./api.js";
import { useSession } from "./context.js";
import { formatDuration, formatTime } from "./format.js";
import { JsonText } from "./json-text.js";
import { routeHref } from "./router.js";
import { hasTemporalUi, TemporalLink } from "./workflow-temporal-link.js";

type Mode = "sync" | "async";

/** A run made from this page: what ExecuteWorkflow answered, and how it was asked. */
interface Run {
  mode: Mode;
  requestedAt: string;
  answer: ExecuteWorkflowResponse;
}

/** Runs kept on screen, newest first. */
const runsKept = 10;

/**
 * The api trigger from the page (D15): sync waits for the response block's answer, async answers with the
 * execution id at once. The input is checked as JSON here, where the person can fix it; everything else
 * (the workflow still there, the plan's execution buckets) is the API's to refuse, in its own words.
 */
export function RunWorkflow({ workflow }: { workflow: Workflow }) {
  const { api } = useSession();
  const [mode, setMode] = useState<Mode>("sync");
  const [inputText, setInputText] = useState("{}");
  const [inputError, setInputError] = useState<string>();
  const [apiError, setApiError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [runs, setRuns] = useState<Run[]>([]);
  const inputField = useRef<HTMLTextAreaElement>(null);

  async function submit(event: Event) {
    event.preventDefault();
    const input = parseInput(inputText);
    setInputError(input.error);
    setApiError(undefined);
    if (input.error !== undefined) {
      inputField.current?.focus();
      return;
    }
    setBusy(true);
    const requestedAt = new Date().toISOString();
    try {
      const answer = await api.workflows.executeWorkflow({
        id: workflow.id,
        input: input.value === undefined ? undefined : fromJson(ValueSchema, input.value),
        async: mode === "async",
      });
      setRuns((earlier) => [{ mode, requestedAt, answer }, ...earlier].slice(0, runsKept));
    } catch (caught) {
      setApiError(errorMessage(caught));
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <form class="form run-form" onSubmit={submit} aria-labelledby="run-form-title">
        <h2 id="run-form-title">Run</h2>
        <fieldset>
          <legend>Mode</legend>
          <label class="inline">
            <input type="radio" name="mode" checked={mode === "sync"} onChange={() => setMode("sync")} />
            Sync: wait for the response block's answer
          </label>
          <label class="inline">
            <input type="radio" name="mode" checked={mode === "async"} onChange={() => setMode("async")} />
            Async: answer with the execution id at once
          </label>
        </fieldset>
        <label for="run-input">Input (JSON)</label>
        <textarea
          id="run-input"
          name="input"
          ref={inputField}
          rows={6}
          spellcheck={false}
          aria-invalid={inputError !== undefined}
          aria-describedby={inputError === undefined ? "run-input-hint" : "run-input-hint run-input-error"}
          value={inputText}
          onInput={(event) => {
            setInputText(event.currentTarget.value);
            setInputError(undefined);
          }}
        />
        <p id="run-input-hint" class="hint">
          What the starter block outputs, such as <code>{'{"todoId": 1}'}</code>; empty runs without input.
        </p>
        {inputError !== undefined && (
          <p id="run-input-error" class="error" role="alert">
            {inputError}
          </p>
        )}
        {apiError && (
          <p class="error" role="alert">
            {apiError}
          </p>
        )}
        <div>
          <button type="submit" disabled={busy}>
            {busy ? (mode === "sync" ? "Running…" : "Starting…") : "Run"}
          </button>
        </div>
      </form>
      {runs.length > 0 && (
        <section aria-labelledby="runs-title">
          <h2 id="runs-title">Runs from this page</h2>
          {runs.map((run) => (
            <RunResult key={run.answer.executionId} run={run} />
          ))}
        </section>
      )}
    </>
  );
}

/** An empty input runs with none; anything else must be JSON, and the message says where it is not. */
function parseInput(text: string): { value?: JsonValue; error?: string } {
  if (!text.trim()) return {};
  try {
    return { value: JSON.parse(text) as JsonValue };
  } catch (caught) {
    return { error: `The input is not valid JSON: ${(caught as Error).message}` };
  }
}

/**
 * What the API answered for one run, and its log entry once the worker has written it: ExecuteWorkflow
 * answers the execution id, and for sync runs the outcome and output (D30: async has no status), so the
 * duration and the entry's id come from the logs API.
 */
function RunResult({ run }: { run: Run }) {
  const { workspaceId } = useSession();
  const { answer, mode } = run;
  const lookup = useLogEntryOf(answer.executionId);
  const entry = lookup.entry;
  return (
    <article class="run" aria-labelledby={`run-${answer.executionId}`}>
      <h3 id={`run-${answer.executionId}`} class="run-title">
        {mode === "sync" ? "Sync run" : "Async run"}{" "}
        <span class="hint" title={run.requestedAt}>
          {formatTime(run.requestedAt)}
        </span>
      </h3>
      <dl class="facts">
        <dt>Execution</dt>
        <dd>
          <code>{answer.executionId}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <RunStatus answer={answer} entry={entry} />
        </dd>
        {mode === "sync" && (
          <>
            <dt>Output</dt>
            <dd>
              <JsonText class="run-output" value={answer.output ? toJson(ValueSchema, answer.output) : "–"} />
            </dd>
          </>
        )}
        <dt>Duration</dt>
        <dd>{entry ? formatDuration(entry.totalDurationMs) : "–"}</dd>
        <dt>Log entry</dt>
        <dd>
          {entry ? (
            <a href={routeHref("logs", entry.id, { ws: workspaceId })}>{entry.id}</a>
          ) : (
            <>
              <a href={routeHref("logs", undefined, { ws: workspaceId, execution: answer.executionId })}>
                Logs of this execution
              </a>{" "}
              <span class="hint">{lookup.note}</span>
            </>
          )}
        </dd>
        {hasTemporalUi() && (
          <>
            <dt>Temporal</dt>
            <dd>
              <TemporalLink executionId={answer.executionId} />
            </dd>
          </>
        )}
      </dl>
    </article>
  );
}

/** A sync answer's outcome as the API gave it; an async run's only what its log entry later says. */
function RunStatus({ answer, entry }: { answer: ExecuteWorkflowResponse; entry: LogEntry | undefined }) {
  if (answer.status !== undefined) return <span class={`status ${answer.status}`}>{answer.status}</span>;
  if (!entry)
    return (
      <>
        <span class="status pending">started</span>{" "}
        <span class="hint">an async answer carries no status; its log entry will say how it ended</span>
      </>
    );
  return (
    <>
      ended, logged as <span class={`level ${entry.level}`}>{entry.level}</span>
    </>
  );
}

/**
 * When to ask the logs API for the run's entry, in ms after the previous ask: at once (a sync run's entry
 * is written before its answer), then less and less often, about two and a half minutes in all. Each ask
 * takes a token of the API's rate limit (D11), so the wait is bounded; the link to the execution's logs
 * stays for later.
 */
const lookupDelaysMs = [0, 500, 1_000, 2_000, 4_000, 8_000, 15_000, 30_000, 30_000, 30_000, 30_000];

function useLogEntryOf(executionId: string): { entry?: LogEntry; note: string } {
  const { api, workspaceId } = useSession();
  const [entry, setEntry] = useState<LogEntry>();
  const [note, setNote] = useState("(its entry appears there when the execution ends)");
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    void (async () => {
      for (const delay of lookupDelaysMs) {
        await new Promise((resolve) => setTimeout(resolve, delay));
        if (signal.aborted) return;
        try {
          const page = await api.logs.listLogs(
            { workspaceId, executionId, limit: 1, details: "basic" },
            { signal },
          );
          if (page.data[0]) return setEntry(page.data[0]);
        } catch (caught) {
          if (!signal.aborted) setNote(`(could not look for its entry: ${errorMessage(caught)})`);
          return;
        }
      }
      setNote("(no entry yet: the execution is still running, or look again later)");
    })();
    return () => controller.abort();
  }, [executionId]);
  return { entry, note };
}
