import { describe, expect, it } from "vitest";
import type { SpanJson, WorkflowStateJson } from "../src/engine/json-shapes.js";
import { changedNodes, reusableRun, starterInput } from "../src/engine/recorded-run.js";
import { traceSpan } from "../src/engine/trace-span.js";

/** A recorded span as the engine writes it (trace-span.ts); `error` makes it a failed one. */
function span(id: string, type: string, options: { error?: string; children?: SpanJson[] } = {}): SpanJson {
  return traceSpan({
    id,
    name: id,
    type,
    start: 0,
    end: 1,
    input: { of: id },
    output: { from: id },
    ...options,
  });
}

describe("what a retry from the failed block reuses (D47)", () => {
  it("the HTTP and agent blocks that succeeded before the first failure, not the pure blocks nor what came after", () => {
    const spans = [
      span("start", "starter"),
      span("fetch", "api"),
      span("check", "condition"),
      span("summarise", "agent"),
      span("post", "api", { error: "the upstream answered 503" }),
      // Reached through post's error edge: it ran after the failure, and runs again if post fails again.
      span("alert", "api"),
    ];

    const run = reusableRun(spans);

    expect(Object.keys(run.outputs)).toEqual(["fetch", "summarise"]);
    expect(run.outputs.fetch).toEqual({ input: { of: "fetch" }, output: { from: "fetch" } });
    expect([...run.nodes]).toEqual(["fetch", "summarise"]);
  });

  it("a loop: every iteration before the failed one, and the failed one up to its failure", () => {
    const spans = [
      span("start", "starter"),
      span("pages", "loop", {
        error: "the upstream answered 503",
        children: [
          span("get-i0", "api"),
          span("put-i0", "api"),
          span("get-i1", "api"),
          span("put-i1", "api", { error: "the upstream answered 503" }),
        ],
      }),
      span("after", "api"),
    ];

    const run = reusableRun(spans);

    expect(Object.keys(run.outputs)).toEqual(["get-i0", "put-i0", "get-i1"]);
    expect([...run.nodes].sort()).toEqual(["get", "pages", "put"]);
  });

  it("a parallel inside a loop: each branch of each iteration on its own", () => {
    const spans = [
      span("outer", "loop", {
        error: "failed",
        children: [
          span("copies-i0", "parallel", {
            error: "failed",
            children: [
              span("a-i0-b0", "api"),
              span("b-i0-b0", "api"),
              span("a-i0-b1", "api", { error: "failed" }),
              span("b-i0-b1", "api"),
            ],
          }),
        ],
      }),
    ];

    const run = reusableRun(spans);

    expect(Object.keys(run.outputs)).toEqual(["a-i0-b0", "b-i0-b0"]);
    expect([...run.nodes].sort()).toEqual(["a", "b", "copies", "outer"]);
  });

  it("the input is the starter's recorded output; an entry without a starter span has none", () => {
    expect(starterInput([span("start", "starter")])).toEqual({ value: { from: "start" } });
    expect(starterInput([])).toBeUndefined();
  });

  it("a reused block or container counts as changed when its definition differs or it is gone", () => {
    const state = (url: string, extra: Partial<WorkflowStateJson> = {}): WorkflowStateJson => ({
      blocks: {
        fetch: { type: "api", name: "Fetch", config: { url } },
        post: { type: "api", name: "Post", config: { url: "https://example.test/post" } },
      },
      edges: [],
      loops: { pages: { type: "for", nodes: ["fetch"], iterations: 2 } },
      parallels: {},
      ...extra,
    });
    const ran = state("https://example.test/a");

    expect(changedNodes(["fetch", "pages"], ran, state("https://example.test/a"))).toEqual([]);
    expect(changedNodes(["fetch", "pages"], ran, state("https://example.test/b"))).toEqual(["fetch"]);
    expect(changedNodes(["pages"], ran, state("https://example.test/a", { loops: {} }))).toEqual(["pages"]);
  });
});
