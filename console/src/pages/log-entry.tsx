import type { Cost, LogEntry } from "../../../gen/flowlog/logs/v1/log_entry_pb.js";
import { useSession } from "../context.js";
import { ExecutionControls } from "../execution-controls.js";
import { formatCost, formatCount, formatDuration, formatTime } from "../format.js";
import { routeHref } from "../router.js";
import { JsonBlock, jsonOf, type SpanPlace, spanPlaces, TraceWaterfall } from "../trace-waterfall.js";
import { CallError, useCall } from "../use-call.js";
import { type NodeRuns, WorkflowGraph } from "../workflow-graph.js";

/**
 * One log entry (issue 17): its facts and cost, the final output, the trace as a waterfall, and the
 * workflow state the execution ran (D13) drawn as a graph with the path it took.
 */
/** `view` holds the list's parameters the entry was opened from, so the way back returns to that list. */
export function LogEntryPage({ id, view }: { id: string; view: URLSearchParams }) {
  const { api, workspaceId } = useSession();
  const [entryCall] = useCall((signal) => api.logs.getLog({ id }, { signal }), [id]);
  const entry = entryCall.value?.data;
  const executionId = entry?.executionId;
  const [executionCall] = useCall(
    async (signal) => (executionId ? api.logs.getExecution({ executionId }, { signal }) : undefined),
    [executionId],
  );
  const name = entry?.workflow?.name ?? entry?.workflowId;

  return (
    <section aria-labelledby="entry-title" aria-busy={entryCall.status === "loading"}>
      <p>
        <a href={routeHref("logs", undefined, { ...Object.fromEntries(view), ws: workspaceId })}>
          ← Back to the logs
        </a>
      </p>
      <h1 id="entry-title">
        {name ? `${name}: log entry` : "Log entry"} <code>{id}</code>
      </h1>
      <CallError state={entryCall} />
      {entryCall.status === "loading" && !entry && <p role="status">Loading the entry…</p>}
      {entry && (
        <>
          <EntryFacts entry={entry} />
          <ExecutionControls executionId={entry.executionId} />
          <ModelCosts cost={entry.cost} />
          <details class="final-output">
            <summary>Final output</summary>
            <JsonBlock
              label="The response block's output, else the last block's"
              value={jsonOf(entry.executionData?.finalOutput) ?? null}
            />
          </details>
          <h2>Trace</h2>
          <TraceWaterfall
            spans={entry.executionData?.traceSpans ?? []}
            startedAt={entry.startedAt}
            endedAt={entry.endedAt}
          />
          <h2>Workflow graph</h2>
          <CallError state={executionCall} />
          {executionCall.status === "loading" && <p role="status">Loading the workflow state…</p>}
          {executionCall.value?.workflowState && (
            <WorkflowGraph
              state={executionCall.value.workflowState}
              runs={runsOf(spanPlaces(entry.executionData?.traceSpans ?? []))}
              name={name ?? "the workflow"}
            />
          )}
        </>
      )}
    </section>
  );
}

function EntryFacts({ entry }: { entry: LogEntry }) {
  const tokens = entry.cost?.tokens;
  return (
    <dl class="facts">
      <dt>Workflow</dt>
      <dd>
        {entry.workflow?.name ?? entry.workflowId} <code>{entry.workflowId}</code>
      </dd>
      <dt>Level</dt>
      <dd>
        <span class={`level ${entry.level}`}>{entry.level}</span>
      </dd>
      <dt>Trigger</dt>
      <dd>{entry.trigger}</dd>
      <dt>Started</dt>
      <dd title={entry.startedAt}>{formatTime(entry.startedAt)}</dd>
      <dt>Ended</dt>
      <dd title={entry.endedAt}>{formatTime(entry.endedAt)}</dd>
      <dt>Duration</dt>
      <dd>{formatDuration(entry.totalDurationMs)}</dd>
      <dt>Cost</dt>
      <dd>
        <data value={String(entry.cost?.total ?? 0)}>{formatCost(entry.cost?.total)}</data>
      </dd>
      <dt>Tokens</dt>
      <dd>
        {tokens
          ? `${formatCount(tokens.total)} (prompt ${formatCount(tokens.prompt)}, completion ${formatCount(tokens.completion)})`
          : "–"}
      </dd>
      <dt>Execution</dt>
      <dd>
        <code>{entry.executionId}</code>
      </dd>
    </dl>
  );
}

function ModelCosts({ cost }: { cost: Cost | undefined }) {
  const models = Object.entries(cost?.models ?? {});
  if (models.length === 0) return <p>No model was used.</p>;
  return (
    <table class="model-costs">
      <caption>Cost by model</caption>
      <thead>
        <tr>
          <th scope="col">Model</th>
          <th scope="col" class="number">
            Input cost
          </th>
          <th scope="col" class="number">
            Output cost
          </th>
          <th scope="col" class="number">
            Total cost
          </th>
          <th scope="col" class="number">
            Prompt tokens
          </th>
          <th scope="col" class="number">
            Completion tokens
          </th>
        </tr>
      </thead>
      <tbody>
        {models.map(([model, figures]) => (
          <tr key={model}>
            <th scope="row">{model}</th>
            <td class="number">{formatCost(figures.input)}</td>
            <td class="number">{formatCost(figures.output)}</td>
            <td class="number">{formatCost(figures.total)}</td>
            <td class="number">{formatCount(figures.tokens?.prompt)}</td>
            <td class="number">{formatCount(figures.tokens?.completion)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Per block, loop or parallel of the state: how the trace's spans of it went. */
function runsOf(places: SpanPlace[]): Map<string, NodeRuns> {
  const runs = new Map<string, NodeRuns>();
  for (const { span, blockId } of places) {
    const start = Date.parse(span.startTime);
    const was = runs.get(blockId) ?? { runs: 0, failed: 0, firstStart: start };
    runs.set(blockId, {
      runs: was.runs + 1,
      failed: was.failed + (span.status === "error" ? 1 : 0),
      firstStart: Math.min(was.firstStart, start),
    });
  }
  return runs;
}
