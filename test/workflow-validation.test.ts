import { fromJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { WorkflowStateSchema } from "../gen/flowlog/workflows/v1/workflow_pb.js";
import type { WorkflowStateJson } from "../src/engine/json-shapes.js";
import { WorkflowGraph } from "../src/engine/workflow-graph.js";
import { defaultQuotas } from "../src/limits/quotas.js";
import { validateWorkflowState } from "../src/services/workflows/validation.js";

type Config = Record<string, unknown>;
interface BlockJson {
  type: string;
  name: string;
  config: Config;
}
interface ContainerJson {
  type: string;
  nodes: string[];
  iterations?: number;
  count?: number;
  collection?: string;
}

const block = (type: string, name: string, config: Config = {}): BlockJson => ({ type, name, config });

/**
 * A workflow using every rule: an api call, a condition on its status, a forEach loop of agent calls,
 * two responses, and an error path. Each test breaks one thing and expects exactly the violation naming it.
 */
function validState() {
  return {
    blocks: {
      start: block("starter", "Start"),
      api1: block("api", "API", {
        method: "POST",
        url: "https://example.test/items/{id}",
        headers: { Authorization: "Bearer {{API_TOKEN}}" },
        body: { id: "<start.id>", tags: ["a", "<start.tags[0]>"] },
      }),
      check: block("condition", "Check", {
        conditions: [{ id: "ok", expression: "<api.status> == 200" }, { id: "else" }],
      }),
      summarize: block("agent", "Summarize", { model: "gpt-4o-mini", prompt: "<api.data>" }),
      done: block("response", "Done", { data: "<summarize.content>" }),
      failed: block("response", "Failed", { data: { error: "<api.error>" } }),
    } as Record<"start" | "api1" | "check" | "summarize" | "done" | "failed", BlockJson> &
      Record<string, BlockJson>,
    edges: [
      { source: "start", target: "api1" },
      { source: "api1", target: "check" },
      { source: "check", target: "items", sourceHandle: "ok" },
      { source: "check", target: "failed", sourceHandle: "else" },
      { source: "items", target: "done" },
      { source: "api1", target: "failed", sourceHandle: "error" },
    ] as { source: string; target: string; sourceHandle?: string }[],
    loops: {
      items: { type: "forEach", nodes: ["summarize"], collection: "<api.data.items>" },
    } as Record<"items", ContainerJson> & Record<string, ContainerJson>,
    parallels: {} as Record<string, ContainerJson>,
  };
}

type State = ReturnType<typeof validState>;

/** The violations of the valid state after `change`. */
function violationsAfter(change: (state: State) => void) {
  const state = validState();
  change(state);
  return validateWorkflowState(parse(state));
}

function parse(state: State) {
  return fromJson(WorkflowStateSchema, JSON.parse(JSON.stringify(state)));
}

/** Exactly one violation, on `field`, whose message says `words`. */
function expectOne(violations: { field: string; message: string }[], field: string, words: string) {
  expect(violations).toEqual([{ field, message: expect.stringContaining(words) }]);
}

describe("a valid workflow", () => {
  it("passes, and the engine can walk every scope of it", () => {
    const state = validState();
    expect(validateWorkflowState(parse(state))).toEqual([]);
    const graph = new WorkflowGraph(state as unknown as WorkflowStateJson);
    expect(graph.scope().order.toSorted()).toEqual(["api1", "check", "done", "failed", "items", "start"]);
    expect(graph.scope("items").entries).toEqual(["summarize"]);
  });
});

describe("blocks", () => {
  it("an unknown block type names the block's type field", () => {
    expectOne(
      violationsAfter((s) => {
        s.blocks.done = block("email", "Done");
      }),
      "state.blocks.done.type",
      'block done: type "email" is not one of starter, api, agent, condition, response',
    );
  });

  it("a workflow without a starter, or with two, is refused on state.blocks", () => {
    const twoStarters = violationsAfter((s) => {
      s.blocks.again = block("starter", "Again");
    });
    expectOne(twoStarters, "state.blocks", "exactly one starter block; found 2 (start, again)");
    const none = violationsAfter((s) => {
      s.blocks.start = block("response", "Start");
    });
    expectOne(none, "state.blocks", "found none");
  });

  it("two blocks whose names normalize alike are refused: references would be ambiguous (D14)", () => {
    expectOne(
      violationsAfter((s) => {
        s.blocks.failed = block("response", "Sum Marize");
      }),
      "state.blocks.failed.name",
      "<summarize.…> would also mean block summarize",
    );
  });
});

describe("edges", () => {
  it("an edge to a missing block names its target", () => {
    expectOne(
      violationsAfter((s) => {
        s.edges[2] = { source: "check", target: "nowhere", sourceHandle: "ok" };
      }),
      "state.edges[2].target",
      "edge 2: target nowhere is no block, loop or parallel",
    );
  });

  it("an edge from a missing block names its source", () => {
    expectOne(
      violationsAfter((s) => {
        s.edges[0] = { source: "ghost", target: "api1" };
      }),
      "state.edges[0].source",
      "edge 0: source ghost is no block",
    );
  });

  it("a sourceHandle of a condition must name one of its branches or the error path", () => {
    expectOne(
      violationsAfter((s) => {
        s.edges[3] = { source: "check", target: "failed", sourceHandle: "otherwise" };
      }),
      "state.edges[3].sourceHandle",
      'condition check has no branch "otherwise"; its handles are ok, else, error',
    );
  });

  it("a cycle is refused on the edge that closes it, with the path around it", () => {
    expectOne(
      violationsAfter((s) => {
        s.edges.push({ source: "done", target: "api1" });
      }),
      "state.edges[6]",
      "edge 6 closes a cycle (api1 -> check -> items -> done -> api1); repeat blocks with a loop",
    );
  });

  it("the members of a loop form its body, run once per iteration: they may not cycle either", () => {
    const violations = violationsAfter((s) => {
      s.blocks.again = block("agent", "Again", { model: "gpt-4o" });
      s.loops.items.nodes.push("again");
      s.edges.push({ source: "summarize", target: "again" }, { source: "again", target: "summarize" });
    });
    expectOne(violations, "state.edges[7]", "closes a cycle (summarize -> again -> summarize)");
  });

  it("an edge between the top level and a loop's member is refused: connect to the loop itself", () => {
    expectOne(
      violationsAfter((s) => {
        s.edges.push({ source: "api1", target: "summarize" });
      }),
      "state.edges[6]",
      "joins api1 (top level) and summarize (inside loop items)",
    );
  });
});

describe("loops and parallels", () => {
  it("a member that does not exist names the member", () => {
    expectOne(
      violationsAfter((s) => {
        s.loops.items.nodes.push("ghost");
      }),
      "state.loops.items.nodes[1]",
      "loop items lists ghost, which is no block, loop or parallel",
    );
    expectOne(
      violationsAfter((s) => {
        s.parallels.fanout = { type: "count", count: 2, nodes: ["nobody"] };
      }),
      "state.parallels.fanout.nodes[0]",
      "parallel fanout lists nobody",
    );
  });

  it("a block belongs to one loop or parallel only", () => {
    expectOne(
      violationsAfter((s) => {
        s.parallels.fanout = { type: "count", count: 2, nodes: ["summarize"] };
      }),
      "state.parallels.fanout.nodes[0]",
      "lists summarize, which is already inside items",
    );
  });

  it("loops and parallels may nest, but not inside each other in turn", () => {
    const nested = violationsAfter((s) => {
      s.parallels.fanout = { type: "count", count: 2, nodes: ["items"] };
      s.edges[2] = { source: "check", target: "fanout", sourceHandle: "ok" };
      s.edges[4] = { source: "fanout", target: "done" };
    });
    expect(nested).toEqual([]);
    const circular = violationsAfter((s) => {
      s.blocks.other = block("response", "Other");
      s.parallels.fanout = { type: "count", count: 2, nodes: ["other", "items"] };
      s.loops.items.nodes.push("fanout");
    });
    expect(circular).toContainEqual({
      field: "state.loops.items.nodes[1]",
      message: "loop items lists fanout, which contains items in turn",
    });
    expect(circular).toContainEqual({
      field: "state.parallels.fanout.nodes[1]",
      message: "parallel fanout lists items, which contains fanout in turn",
    });
    expect(circular.filter((v) => v.field === "state.parallels.fanout.nodes[0]")).toEqual([]);
  });

  it("the starter cannot be inside a loop", () => {
    const violations = violationsAfter((s) => {
      s.loops.items.nodes.push("start");
    });
    expect(violations).toContainEqual({
      field: "state.loops.items.nodes[1]",
      message: "loop items cannot contain the starter block: it runs first",
    });
  });

  it("a loop's type and the setting it needs are checked", () => {
    expectOne(
      violationsAfter((s) => {
        s.loops.items = { type: "while", nodes: ["summarize"] };
      }),
      "state.loops.items.type",
      'loop items has type "while"; use for or forEach',
    );
    expectOne(
      violationsAfter((s) => {
        s.loops.items = { type: "for", nodes: ["summarize"] };
      }),
      "state.loops.items.iterations",
      "loop items (for) needs iterations from 0 to 1000",
    );
    expectOne(
      violationsAfter((s) => {
        s.blocks.copy = block("response", "Copy");
        s.parallels.fanout = { type: "count", count: 101, nodes: ["copy"] };
      }),
      "state.parallels.fanout.count",
      "parallel fanout (count) needs count from 0 to 100",
    );
  });
});

describe("references (D14)", () => {
  it("a bad reference names the config field it is in", () => {
    expectOne(
      violationsAfter((s) => {
        s.blocks.api1.config.url = "https://example.test/<api.data";
      }),
      "state.blocks.api1.config.url",
      '"<api.data" is not closed with >',
    );
  });

  it("nested fields and list items are named by their own path", () => {
    const violations = violationsAfter((s) => {
      const config = s.blocks.api1.config as { headers: Record<string, string>; body: { tags: string[] } };
      config.headers.Authorization = "Bearer {{API TOKEN}}";
      config.body.tags[1] = "<start..tags>";
    });
    expect(violations.map((v) => v.field)).toEqual([
      "state.blocks.api1.config.headers.Authorization",
      "state.blocks.api1.config.body.tags[1]",
    ]);
  });

  it("a loop's collection is checked too", () => {
    expectOne(
      violationsAfter((s) => {
        s.loops.items.collection = "<api.data.items";
      }),
      "state.loops.items.collection",
      "is not closed with >",
    );
  });
});

describe("block configs", () => {
  const api = (s: State) => s.blocks.api1.config;

  it("an api block needs a method of GET, POST, PUT, DELETE or PATCH", () => {
    expectOne(
      violationsAfter((s) => {
        api(s).method = "FETCH";
      }),
      "state.blocks.api1.config.method",
      "block api1: method must be one of GET, POST, PUT, DELETE, PATCH",
    );
  });

  it("an api block needs a url", () => {
    expectOne(
      violationsAfter((s) => {
        delete api(s).url;
      }),
      "state.blocks.api1.config.url",
      "block api1: an api block needs a url",
    );
  });

  it("a body only goes with POST, PUT and PATCH (D16)", () => {
    expectOne(
      violationsAfter((s) => {
        api(s).method = "GET";
      }),
      "state.blocks.api1.config.body",
      "a GET request has no body",
    );
  });

  it("an agent block needs a model", () => {
    expectOne(
      violationsAfter((s) => {
        s.blocks.summarize.config = { prompt: "hello" };
      }),
      "state.blocks.summarize.config.model",
      "block summarize: an agent block needs a model",
    );
  });

  it("a condition's expressions must parse", () => {
    expectOne(
      violationsAfter((s) => {
        s.blocks.check.config = {
          conditions: [{ id: "ok", expression: "<api.status> = 200" }, { id: "else" }],
        };
      }),
      "state.blocks.check.config",
      "block check: conditions[0].expression: assignment is not allowed",
    );
  });
});

describe("limits on one execution (D26)", () => {
  const loop = (nodes: string[], iterations: number): ContainerJson => ({ type: "for", nodes, iterations });
  const call = (name: string, config: Config = {}) =>
    block("api", name, { method: "GET", url: "https://example.test/", ...config });

  it("more blocks than the limit are refused on state.blocks, naming the limit", () => {
    const at = violationsAfter((s) => {
      for (let i = 0; i < 194; i++) s.blocks[`extra${i}`] = block("response", `Extra ${i}`);
    });
    expect(at).toEqual([]);
    expectOne(
      violationsAfter((s) => {
        for (let i = 0; i < 195; i++) s.blocks[`extra${i}`] = block("response", `Extra ${i}`);
      }),
      "state.blocks",
      "a workflow has at most 200 blocks; this one has 201",
    );
  });

  it("a loop of 100 iterations around a loop of 20 api calls is refused on the outer loop's iterations", () => {
    expectOne(
      violationsAfter((s) => {
        s.blocks.fetch = call("Fetch");
        s.loops.inner = loop(["fetch"], 20);
        s.loops.outer = loop(["inner"], 100);
      }),
      "state.loops.outer.iterations",
      "loop outer can run 2000 blocks in one execution (100 iterations), more than the limit of 1000 block runs per execution",
    );
  });

  it("runs multiply at every depth, through parallels too: 10 x 10 x 9 passes, 10 x 10 x 11 is refused", () => {
    const nested = (innermost: number) =>
      violationsAfter((s) => {
        s.blocks.fetch = call("Fetch");
        s.loops.c = loop(["fetch"], innermost);
        s.parallels.b = { type: "count", count: 10, nodes: ["c"] };
        s.loops.a = loop(["b"], 10);
      });
    expect(nested(9)).toEqual([]);
    expectOne(nested(11), "state.loops.a.iterations", "loop a can run 1100 blocks");
  });

  it("loops that each fit but together exceed the limit are refused on the state", () => {
    expectOne(
      violationsAfter((s) => {
        s.blocks.one = call("One");
        s.blocks.two = call("Two");
        s.loops.first = loop(["one"], 600);
        s.loops.second = loop(["two"], 600);
      }),
      "state",
      "the workflow can run 1206 blocks in one execution, more than the limit of 1000 block runs per execution",
    );
  });

  it("a forEach counts its collection once on save: its length is bounded at run time", () => {
    expect(
      violationsAfter((s) => {
        s.blocks.fetch = call("Fetch");
        s.loops.inner = loop(["fetch"], 900);
        s.loops.items = { type: "forEach", nodes: ["summarize", "inner"], collection: "<api.data.items>" };
      }),
    ).toEqual([]);
  });

  it("the HTTP block's retries, timeout and backoff are bounded, each named by its config path", () => {
    const violations = violationsAfter((s) => {
      s.blocks.api1.config = {
        ...s.blocks.api1.config,
        retries: 11,
        timeoutMs: 120_001,
        retryBaseMs: 99,
        retryMaxMs: 60_001,
      };
    });
    expect(violations).toEqual([
      {
        field: "state.blocks.api1.config.retries",
        message: "block api1: retries must be at most 10, not 11",
      },
      {
        field: "state.blocks.api1.config.timeoutMs",
        message: "block api1: timeoutMs must be at most 120000, not 120001",
      },
      {
        field: "state.blocks.api1.config.retryBaseMs",
        message: "block api1: retryBaseMs must be at least 100, not 99",
      },
      {
        field: "state.blocks.api1.config.retryMaxMs",
        message: "block api1: retryMaxMs must be at most 60000, not 60001",
      },
    ]);
    const atTheLimits = violationsAfter((s) => {
      s.blocks.api1.config = {
        ...s.blocks.api1.config,
        retries: 10,
        timeoutMs: 120_000,
        retryBaseMs: 100,
        retryMaxMs: 60_000,
      };
    });
    expect(atTheLimits).toEqual([]);
  });

  it("the limits are the configured ones (FLOWLOG_QUOTAS), not constants", () => {
    const quotas = {
      ...defaultQuotas,
      workflow: { ...defaultQuotas.workflow, maxBlocks: 5 },
      httpBlock: { ...defaultQuotas.httpBlock, maxRetries: 2 },
    };
    const state = validState();
    state.blocks.api1.config = { ...state.blocks.api1.config, retries: 3 };
    expect(validateWorkflowState(parse(state), quotas)).toEqual([
      { field: "state.blocks", message: "a workflow has at most 5 blocks; this one has 6" },
      { field: "state.blocks.api1.config.retries", message: "block api1: retries must be at most 2, not 3" },
    ]);
  });

  it("block ids such as constructor and toString are names like any other", () => {
    expect(
      violationsAfter((s) => {
        Object.assign(s.blocks, { constructor: call("Constructor"), toString: call("To String") });
        s.edges.push(
          { source: "start", target: "constructor" },
          { source: "constructor", target: "toString" },
        );
      }),
    ).toEqual([]);
  });
});
