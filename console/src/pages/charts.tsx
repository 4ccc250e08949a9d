import type { DayModelCost, HourStats } from "../../../gen/flowlog/logs/v1/logs_service_pb.js";
import { useSession } from "../context.js";
import { FilterForm } from "../filter-form.js";
import { formatCost, formatCount, formatDuration, formatTime } from "../format.js";
import { filterParams, filtersFromParams } from "../log-filters.js";
import { navigate, type Route, routeHref } from "../router.js";
import { type ChartSeries, TimeChart } from "../time-chart.js";
import { CallError, useCall } from "../use-call.js";

/** The ranges one click away; the API takes any range up to 31 days (GetLogStats). */
const ranges = [
  { label: "Last 24 hours", hours: 24 },
  { label: "Last 7 days", hours: 24 * 7 },
  { label: "Last 30 days", hours: 24 * 30 },
];

/** Colours that keep 3:1 against white (WCAG's non-text contrast) and differ in lightness too. */
const palette = ["#0b5cad", "#a4161a", "#1a6b34", "#6b4a00", "#5a2d82", "#005f66", "#8a3b12", "#3d4450"];

/**
 * Issue 17's charts over the selected range and filters: executions and errors per hour, p50 and p95
 * duration per hour, cost per day by model. One GetLogStats call; the logs page's filters apply.
 */
export function ChartsPage({ route }: { route: Route }) {
  const { api, workspaceId } = useSession();
  const params = route.params;
  const { executionId: _oneExecution, ...filters } = filtersFromParams(params);
  const [stats] = useCall(
    (signal) => api.logs.getLogStats({ workspaceId, ...filters }, { signal }),
    [workspaceId, params.toString()],
  );
  const show = (next: Record<string, string>) =>
    navigate(routeHref("charts", undefined, { ws: workspaceId, ...next }));
  const pickRange = (hours: number) => {
    const end = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000);
    const start = new Date(end.getTime() - hours * 3_600_000);
    show({ ...filterParams(params), from: start.toISOString(), to: end.toISOString() });
  };
  const answer = stats.value;

  return (
    <section aria-labelledby="charts-title">
      <h1 id="charts-title">Charts</h1>
      <FilterForm params={params} onApply={show} />
      <p class="toolbar">
        {ranges.map((range) => (
          <button key={range.hours} type="button" class="quiet" onClick={() => pickRange(range.hours)}>
            {range.label}
          </button>
        ))}
        <a href={routeHref("logs", undefined, { ws: workspaceId, ...filterParams(params) })}>
          Logs of this view
        </a>
      </p>
      <CallError state={stats} />
      {answer && (
        <p aria-live="polite">
          From {formatTime(answer.start)} to {formatTime(answer.end)}:{" "}
          {formatCount(answer.hours.reduce((sum, hour) => sum + hour.executions, 0))} executions,{" "}
          {formatCount(answer.hours.reduce((sum, hour) => sum + hour.errors, 0))} errors.
        </p>
      )}
      {answer && <HourCharts hours={answer.hours} />}
      {answer && <CostChart costs={answer.modelCosts} />}
    </section>
  );
}

function HourCharts({ hours }: { hours: HourStats[] }) {
  const times = hours.map((hour) => Date.parse(hour.hour) / 1_000);
  const counts: ChartSeries[] = [
    { label: "Executions", values: hours.map((h) => h.executions), color: palette[0] ?? "", bars: true },
    { label: "Errors", values: hours.map((h) => h.errors), color: palette[1] ?? "", bars: true },
  ];
  const durations: ChartSeries[] = [
    { label: "p50", values: hours.map((h) => h.p50DurationMs ?? null), color: palette[2] ?? "" },
    { label: "p95", values: hours.map((h) => h.p95DurationMs ?? null), color: palette[4] ?? "" },
  ];
  return (
    <>
      <figure>
        <figcaption>
          <h2>Executions and errors per hour</h2>
        </figcaption>
        <TimeChart times={times} series={counts} unit="executions" label="Executions and errors per hour" />
      </figure>
      <figure>
        <figcaption>
          <h2>Duration per hour, p50 and p95</h2>
        </figcaption>
        <TimeChart times={times} series={durations} unit="ms" label="p50 and p95 duration per hour" />
      </figure>
      <details>
        <summary>The hours as a table</summary>
        <table class="chart-data" aria-label="Executions, errors and durations per hour">
          <thead>
            <tr>
              <th scope="col">Hour</th>
              <th scope="col" class="number">
                Executions
              </th>
              <th scope="col" class="number">
                Errors
              </th>
              <th scope="col" class="number">
                p50
              </th>
              <th scope="col" class="number">
                p95
              </th>
            </tr>
          </thead>
          <tbody>
            {hours.map((hour) => (
              <tr key={hour.hour}>
                <td>{formatTime(hour.hour)}</td>
                <td class="number">{formatCount(hour.executions)}</td>
                <td class="number">{formatCount(hour.errors)}</td>
                <td class="number">{formatDuration(hour.p50DurationMs)}</td>
                <td class="number">{formatDuration(hour.p95DurationMs)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </>
  );
}

/** Cost per day by model: one bar series per model over the days that had any. */
function CostChart({ costs }: { costs: DayModelCost[] }) {
  const days = [...new Set(costs.map((cost) => cost.day))].sort();
  const models = [...new Set(costs.map((cost) => cost.model))].sort();
  const byKey = new Map(costs.map((cost) => [`${cost.day} ${cost.model}`, cost.cost]));
  const series: ChartSeries[] = models.map((model, index) => ({
    label: model,
    values: days.map((day) => byKey.get(`${day} ${model}`) ?? 0),
    color: palette[index % palette.length] ?? "",
    bars: true,
  }));
  return (
    <>
      <figure>
        <figcaption>
          <h2>Cost per day by model</h2>
        </figcaption>
        {costs.length === 0 ? (
          <p>No model was billed in this range.</p>
        ) : (
          <TimeChart
            times={days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1_000)}
            series={series}
            unit="USD"
            label="Cost per day by model"
            stacked
          />
        )}
      </figure>
      <details>
        <summary>The costs as a table</summary>
        <table class="chart-data" aria-label="Cost per day by model">
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Model</th>
              <th scope="col" class="number">
                Cost
              </th>
              <th scope="col" class="number">
                Tokens
              </th>
            </tr>
          </thead>
          <tbody>
            {costs.map((cost) => (
              <tr key={`${cost.day} ${cost.model}`}>
                <td>{cost.day}</td>
                <td>{cost.model}</td>
                <td class="number">{formatCost(cost.cost)}</td>
                <td class="number">{formatCount(cost.tokens)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </>
  );
}
