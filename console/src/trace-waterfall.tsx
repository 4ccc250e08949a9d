import { type JsonValue, toJson } from "@bufbuild/protobuf";
import { type Value, ValueSchema } from "@bufbuild/protobuf/wkt";
import { useState } from "preact/hooks";
import type { TraceSpan } from "../../gen/flowlog/logs/v1/log_entry_pb.js";
import { formatCost, formatCount, formatDuration, formatTime } from "./format.js";
import { JsonText } from "./json-text.js";

/** A `google.protobuf.Value` of the API (a span's input and output, the final output) as plain JSON. */
export function jsonOf(value: Value | undefined): JsonValue | undefined {
  return value === undefined ? undefined : toJson(ValueSchema, value);
}

/** One span where the trace has it: how deep it nests, the block it ran, and which iteration or branch. */
export interface SpanPlace {
  span: TraceSpan;
  depth: number;
  /** The id of the block, loop or parallel in the workflow state. */
  blockId: string;
  /** "iteration 2" or "branch 1" for a run inside a loop or parallel. */
  round?: string;
}

/**
 * Every span of the trace in order, parents before children. The engine names a span after its block and
 * suffixes one `-i<iteration>` or `-b<branch>` per enclosing loop or parallel (D17, run-graph.ts), so a
 * span at depth d carries exactly d suffixes, and what is left is the block's id.
 */
export function spanPlaces(spans: readonly TraceSpan[], depth = 0): SpanPlace[] {
  return spans.flatMap((span) => {
    const suffixes = new RegExp(`^(.+?)((?:-[ib]\\d+){${depth}})$`).exec(span.id);
    const last = /-([ib])(\d+)$/.exec(suffixes?.[2] ?? "");
    const round = last && `${last[1] === "i" ? "iteration" : "branch"} ${Number(last[2]) + 1}`;
    const place = { span, depth, blockId: suffixes?.[1] ?? span.id, round: round ?? undefined };
    return [place, ...spanPlaces(span.children, depth + 1)];
  });
}

interface Timeline {
  /** The execution's start, Unix ms: the waterfall's zero. */
  origin: number;
  /** How many ms the waterfall spans, never 0. */
  length: number;
}

function timelineOf(places: SpanPlace[], startedAt: string, endedAt: string): Timeline {
  const origin = Math.min(Date.parse(startedAt), ...places.map(({ span }) => Date.parse(span.startTime)));
  const end = Math.max(Date.parse(endedAt), ...places.map(({ span }) => Date.parse(span.endTime)));
  return { origin, length: Math.max(1, end - origin) };
}

/**
 * The trace as a waterfall (issue 17): one row per span, children under their loop or parallel, each bar
 * placed by its start and end on the execution's clock. A row's button opens what the block took in and
 * gave out, its error, and for an agent its model, tokens and cost; ↑ and ↓ move between rows.
 */
export function TraceWaterfall(props: { spans: TraceSpan[]; startedAt: string; endedAt: string }) {
  const places = spanPlaces(props.spans);
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  if (places.length === 0) return <p>The execution ran no block, so its trace has no spans.</p>;
  const timeline = timelineOf(places, props.startedAt, props.endedAt);
  const toggle = (id: string) =>
    setOpen((was) => {
      const next = new Set(was);
      if (!next.delete(id)) next.add(id);
      return next;
    });

  return (
    <div class="waterfall">
      <p class="toolbar">
        <button type="button" class="quiet" onClick={() => setOpen(new Set(places.map((p) => p.span.id)))}>
          Expand all
        </button>
        <button type="button" class="quiet" onClick={() => setOpen(new Set())}>
          Collapse all
        </button>
      </p>
      <Ruler timeline={timeline} />
      <SpanList
        spans={props.spans}
        places={new Map(places.map((place) => [place.span, place]))}
        timeline={timeline}
        open={open}
        toggle={toggle}
        onKeyDown={moveBetweenRows}
      />
    </div>
  );
}

function Ruler({ timeline }: { timeline: Timeline }) {
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  return (
    <div class="span-row ruler" aria-hidden="true">
      <span>Span</span>
      <span>Status</span>
      <div class="span-track">
        {ticks.map((at) => (
          <span key={at} class="tick" style={{ left: `${at * 100}%` }}>
            {formatDuration(Math.round(at * timeline.length))}
          </span>
        ))}
      </div>
      <span class="span-duration">Duration</span>
    </div>
  );
}

interface ListProps {
  spans: TraceSpan[];
  places: ReadonlyMap<TraceSpan, SpanPlace>;
  timeline: Timeline;
  open: ReadonlySet<string>;
  toggle(id: string): void;
  onKeyDown?(event: KeyboardEvent): void;
}

/** The spans at one depth as a list, each followed by its children's list: the nesting is the markup's. */
function SpanList({ spans, onKeyDown, ...rest }: ListProps) {
  return (
    <ul class="spans" onKeyDown={onKeyDown}>
      {spans.map((span) => {
        const place = rest.places.get(span);
        return (
          place && (
            <li key={span.id}>
              <SpanRow place={place} {...rest} />
              {span.children.length > 0 && <SpanList spans={span.children} {...rest} />}
            </li>
          )
        );
      })}
    </ul>
  );
}

function SpanRow({ place, timeline, open, toggle }: { place: SpanPlace } & Omit<ListProps, "spans">) {
  const { span, depth, round } = place;
  const expanded = open.has(span.id);
  const detailsId = `span-${span.id}`;
  const start = Date.parse(span.startTime) - timeline.origin;
  const end = Date.parse(span.endTime) - timeline.origin;
  const container = span.type === "loop" || span.type === "parallel";
  return (
    <div class="span" data-span-id={span.id} style={{ "--depth": depth }}>
      <div class="span-row">
        <button
          type="button"
          class="span-toggle"
          aria-expanded={expanded}
          aria-controls={detailsId}
          onClick={() => toggle(span.id)}
        >
          <span class="chevron" aria-hidden="true">
            {expanded ? "▾" : "▸"}
          </span>
          <span class="span-name">{span.name}</span>
          <span class="span-type">
            {span.type}
            {round && ` · ${round}`}
          </span>
        </button>
        <span class={`status ${span.status}`}>{span.status}</span>
        <div class="span-track">
          <div
            class={`span-bar ${span.status}${container ? " group" : ""}`}
            style={{
              left: `${(start / timeline.length) * 100}%`,
              width: `${((end - start) / timeline.length) * 100}%`,
            }}
          />
          <span class="visually-hidden">
            from {formatDuration(start)} to {formatDuration(end)} after the start
          </span>
        </div>
        <span class="span-duration">{formatDuration(span.durationMs)}</span>
      </div>
      {span.error !== undefined && <p class="span-error">{span.error}</p>}
      <div id={detailsId} class="span-details" hidden={!expanded}>
        {expanded && <SpanDetails place={place} start={start} />}
      </div>
    </div>
  );
}

function SpanDetails({ place, start }: { place: SpanPlace; start: number }) {
  const { span, blockId } = place;
  const input = jsonOf(span.input);
  const output = jsonOf(span.output);
  return (
    <>
      <dl class="facts">
        <dt>Span</dt>
        <dd>
          <code>{span.id}</code> (block <code>{blockId}</code>)
        </dd>
        <dt>Started</dt>
        <dd title={span.startTime}>
          {formatTime(span.startTime)}, {formatDuration(start)} after the execution's start
        </dd>
        <dt>Duration</dt>
        <dd>{formatDuration(span.durationMs)}</dd>
        {span.model !== undefined && (
          <>
            <dt>Model</dt>
            <dd>{span.model}</dd>
          </>
        )}
        {span.tokens && (
          <>
            <dt>Tokens</dt>
            <dd class="tokens">
              <Figure name="prompt" value={span.tokens.prompt} />,{" "}
              <Figure name="completion" value={span.tokens.completion} />,{" "}
              <Figure name="total" value={span.tokens.total} />
            </dd>
          </>
        )}
        {span.cost !== undefined && (
          <>
            <dt>Cost</dt>
            <dd>
              <data class="cost" value={String(span.cost)} title={`$${span.cost}`}>
                {formatCost(span.cost)}
              </data>
            </dd>
          </>
        )}
      </dl>
      {span.error !== undefined && (
        <p class="error">
          <strong>Error:</strong> {span.error}
        </p>
      )}
      {input !== undefined && <JsonBlock label="Input" value={input} />}
      {output !== undefined && <JsonBlock label="Output" value={output} />}
    </>
  );
}

/** A count people read, with the exact figure in the markup for tools and tests. */
function Figure({ name, value }: { name: string; value: number }) {
  return (
    <data class={name} value={String(value)}>
      {name} {formatCount(value)}
    </data>
  );
}

export function JsonBlock({ label, value }: { label: string; value: JsonValue }) {
  return (
    <figure class="json">
      <figcaption>{label}</figcaption>
      <JsonText value={value} />
    </figure>
  );
}

/** ↑/↓ (and Home/End) move the focus between the rows' buttons, as in any list of expandable rows. */
function moveBetweenRows(event: KeyboardEvent): void {
  const target = event.target as HTMLElement;
  if (!target.classList.contains("span-toggle")) return;
  const buttons = [...(event.currentTarget as HTMLElement).querySelectorAll<HTMLElement>(".span-toggle")];
  const at = buttons.indexOf(target);
  const next = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: buttons.length - 1 }[event.key];
  if (next === undefined) return;
  event.preventDefault();
  buttons[Math.max(0, Math.min(buttons.length - 1, next))]?.focus();
}
