import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface ChartSeries {
  label: string;
  /** One value per x; null is a gap (an hour without executions has no percentile). */
  values: (number | null)[];
  color: string;
  /** Bars for counts and amounts, lines for durations. */
  bars?: boolean;
}

/**
 * A time-series chart drawn by uPlot on a canvas. A canvas says nothing to a screen reader, so every chart
 * sits in a figure whose caption names it and whose table (ChartTable) holds the same figures.
 */
export function TimeChart({
  times,
  series,
  unit,
  label,
  stacked = false,
}: {
  /** Seconds since the epoch, as uPlot's time scale takes them. */
  times: number[];
  series: ChartSeries[];
  unit: string;
  label: string;
  /** Bars on top of each other (cost by model: the stack's height is the day's cost). */
  stacked?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  // The figures, not the arrays' identities: a page's re-render must not redraw an unchanged chart.
  const figures = JSON.stringify([times, series, unit, stacked]);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const bars = uPlot.paths.bars?.({ size: [0.8, 48] });
    const drawn = stacked ? stack(series) : series;
    // Half a step of room at each end, so the first and last bars are whole.
    const step = Math.min(...times.slice(1).map((time, i) => time - (times[i] ?? 0)), 86_400);
    const chart = new uPlot(
      {
        width: Math.max(320, element.clientWidth),
        height: 220,
        scales: { x: { time: true, range: (_chart, min, max) => [min - step / 2, max + step / 2] } },
        axes: [{}, { label: unit, size: 60 }],
        series: [
          {},
          ...drawn.map((s) => ({
            label: s.label,
            stroke: s.color,
            fill: s.bars ? `${s.color}99` : undefined,
            width: s.bars ? 1 : 2,
            paths: s.bars ? bars : undefined,
            spanGaps: false,
          })),
        ],
      },
      [times, ...drawn.map((s) => s.values)] as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(320, element.clientWidth), height: 220 }),
    );
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [figures]);
  return <div class="chart" ref={box} role="img" aria-label={label} />;
}

/**
 * Stacked bars as uPlot draws them: each series becomes the running total up to it, and the totals are
 * drawn tallest first, so each series shows as its own band on top of the ones before it.
 */
function stack(series: ChartSeries[]): ChartSeries[] {
  let running: number[] = [];
  const totals = series.map((s) => {
    running = s.values.map((value, i) => (running[i] ?? 0) + (value ?? 0));
    return { ...s, values: running };
  });
  return totals.reverse();
}
