import { benchStack, type FlowlogStack, getJson } from "./support/flowlog-stack.js";
import { type Receiver, startModelProvider, startReceiver } from "./support/receiver.js";
import { type Bench, type BenchOptions, ms, ratio, type Table } from "./support/report.js";
import { distribution, timed } from "./support/sample.js";

/**
 * Rounds of the three sides, after one untimed round; odd, so each median is one round's. A round takes
 * about two seconds.
 */
const plans = { quick: { rounds: 3 }, full: { rounds: 21 } };

/** The upstream's fixed latency for each HTTP block, and the model provider's for each agent block. */
const upstreamLatencyMs = 20;
const modelLatencyMs = 50;

/** How often the bench looks for an execution's entry: a side's time carries up to this much. */
const pollMs = 10;

/**
 * Issue 54's goal (D47): "a resume from the failed block costs no more than the blocks it runs again". One
 * stack and a workflow of nine blocks after the starter: four before the failing one (HTTP, agent, HTTP,
 * HTTP), then `charge` (HTTP), two more HTTP blocks around an agent block, and a response block. Each
 * reads the one before but `charge`, which reads the input, so the blocks from it on run alone too. Every HTTP block posts to a loopback upstream that answers after a fixed latency;
 * agent blocks call a loopback model provider on the chat-completions wire, priced as gpt-4o-mini. The
 * workflow is run to its failure while `charge`'s upstream answers 503, once per round and side that
 * retries it; then the upstream answers again. Each round then times, in an order that turns every round:
 *
 * - the resume: `POST /api/v1/executions/{id}:retry` with `from: failed_block`, which reuses the four
 *   blocks' recorded runs and runs `charge` onwards;
 * - the baseline, "the blocks it runs again": a fresh execution of a workflow of only `charge` onwards,
 *   the same configs against the same upstreams, started with `POST .../execute` and `async: true`;
 * - for context, a retry of another failed execution from the start, which runs every block again.
 *
 * Each is timed from its call until its entry is listed, as bulk-retry times its sides. The bench checks
 * that each side called exactly the upstreams its blocks name, and no more: a resume that ran a reused
 * block again would be measured as something else.
 */
export const resumeBench: Bench = {
  name: "resume",
  async run(options: BenchOptions) {
    const { rounds } = options.quick ? plans.quick : plans.full;
    const upstream = await startUpstream();
    const provider = await startModelProvider(modelLatencyMs);
    const stack = await benchStack(options);
    try {
      await useModelProvider(stack, provider);
      const whole = await saveWorkflow(stack, "resume: whole", [...before, ...after], upstream.receiver.url);
      const tail = await saveWorkflow(stack, "resume: from charge", after, upstream.receiver.url);
      // One failed execution per retry: a resume and a retry from the start each round, the warm-up's too.
      const failed = await failedExecutions(stack, whole, upstream, 2 * (rounds + 1));
      upstream.down = false;

      const sides: Side[] = [
        {
          name: "resume from the failed block",
          blocks: after,
          start: (round) =>
            retry(stack, failed[2 * round] as string, { from: "failed_block", version: "original" }),
        },
        {
          name: "fresh run of charge onwards (baseline)",
          blocks: after,
          start: (round) => execute(stack, tail, round),
        },
        {
          name: "retry from the start (context)",
          blocks: [...before, ...after],
          start: (round) =>
            retry(stack, failed[2 * round + 1] as string, { from: "start", version: "original" }),
        },
      ];
      const runs = new Map<Side, Run[]>(sides.map((side) => [side, []]));
      for (let round = 0; round <= rounds; round++) {
        const turn = round % sides.length;
        for (const side of [...sides.slice(turn), ...sides.slice(0, turn)]) {
          const run = await timedRun(stack, upstream, side, round);
          // Round 0 warms each path up (first workflow tasks, prepared statements) and is not counted.
          if (round > 0) runs.get(side)?.push(run);
        }
      }
      return [sidesTable(sides, runs, rounds), goalTable(sides, runs, rounds)];
    } finally {
      await stack.stop();
      await provider.close();
      await upstream.receiver.close();
    }
  },
};

interface BlockSpec {
  id: string;
  type: "api" | "agent" | "response";
  /** The upstream path an HTTP block posts to, or the prompt of an agent block. */
  target: string;
  /** An HTTP block's body, or a response block's data. */
  body?: Record<string, string>;
}

/** The blocks before the one that fails: their runs are what a resume reuses. */
const before: BlockSpec[] = [
  { id: "catalog", type: "api", target: "catalog", body: { order: "<start.order>" } },
  { id: "summary", type: "agent", target: "Summarise <catalog.data.title>" },
  { id: "enrich", type: "api", target: "enrich", body: { summary: "<summary.content>" } },
  { id: "quote", type: "api", target: "quote", body: { item: "<enrich.data.id>" } },
];

/** The failing block and those after it: what a resume runs again. None reads a block before `charge`. */
const after: BlockSpec[] = [
  { id: "charge", type: "api", target: "charge", body: { order: "<start.order>" } },
  { id: "notify", type: "api", target: "notify", body: { charged: "<charge.data.id>" } },
  { id: "explain", type: "agent", target: "Explain receipt <notify.data.id>" },
  { id: "archive", type: "api", target: "archive", body: { note: "<explain.content>" } },
  { id: "done", type: "response", target: "", body: { archived: "<archive.data.id>" } },
];

/** The upstream of every HTTP block: a 1.2 KB JSON document after a fixed latency; `charge` 503 while down. */
interface Upstream {
  receiver: Receiver;
  down: boolean;
  /** Calls received so far, by path. */
  calls: Map<string, number>;
}

async function startUpstream(): Promise<Upstream> {
  const items = Array.from({ length: 24 }, (_, n) => ({ sku: `sku-${n}`, name: `bench item ${n}`, qty: n }));
  const upstream: Omit<Upstream, "receiver"> = { down: true, calls: new Map() };
  const receiver = await startReceiver((request, _body, _arrivedAt, response) => {
    const path = (request.url ?? "").slice(1);
    const served = (upstream.calls.get(path) ?? 0) + 1;
    upstream.calls.set(path, served);
    const down = upstream.down && path === "charge";
    setTimeout(() => {
      response.writeHead(down ? 503 : 200, { "content-type": "application/json" });
      response.end(
        JSON.stringify(
          down ? { error: "down" } : { id: `${path}-${served}`, title: `${path} answer`, items },
        ),
      );
    }, upstreamLatencyMs);
  });
  return Object.assign(upstream, { receiver });
}

/** The agent blocks' provider (D13): the workspace's two environment variables, set through the API. */
async function useModelProvider(stack: FlowlogStack, provider: Receiver): Promise<void> {
  const values = { AGENT_BASE_URL: provider.url, AGENT_API_KEY: "sk-bench-not-a-secret" };
  for (const [name, value] of Object.entries(values)) {
    const response = await fetch(
      `http://${stack.api}/api/v1/workspaces/${stack.workspaceId}/environment/${name}`,
      {
        method: "PUT",
        headers: { ...stack.auth, "content-type": "application/json" },
        body: JSON.stringify({ value }),
      },
    );
    if (!response.ok)
      throw new Error(`setting ${name} answered ${response.status}: ${await response.text()}`);
  }
}

/** Saves the starter followed by `blocks` in a chain; the workflow's id. */
async function saveWorkflow(
  stack: FlowlogStack,
  name: string,
  blocks: BlockSpec[],
  upstreamUrl: string,
): Promise<string> {
  const state = {
    blocks: Object.fromEntries([
      ["start", { type: "starter", name: "Start" }],
      ...blocks.map((block) => [block.id, blockJson(block, upstreamUrl)]),
    ]),
    edges: ["start", ...blocks.map((block) => block.id)].slice(1).map((target, n, targets) => ({
      source: n === 0 ? "start" : targets[n - 1],
      target,
    })),
  };
  const { workflow } = await stack.post<{ workflow: { id: string } }>(
    `/api/v1/workspaces/${stack.workspaceId}/workflows`,
    { name, state },
  );
  return workflow.id;
}

function blockJson(block: BlockSpec, upstreamUrl: string) {
  // Block names are what references read (`<charge.data>`): the id, capitalised.
  const name = block.id[0]?.toUpperCase() + block.id.slice(1);
  switch (block.type) {
    case "api":
      // No block retry: the failing block fails at its first 503, and no run waits out a backoff.
      return {
        type: "api",
        name,
        config: { method: "POST", url: `${upstreamUrl}/${block.target}`, body: block.body, retries: 0 },
      };
    case "agent":
      return { type: "agent", name, config: { model: "gpt-4o-mini", prompt: block.target } };
    case "response":
      return { type: "response", name, config: { data: block.body, status: 200 } };
  }
}

/** Runs the whole workflow `count` times while `charge` is down; their execution ids, each logged failed. */
async function failedExecutions(
  stack: FlowlogStack,
  workflowId: string,
  upstream: Upstream,
  count: number,
): Promise<string[]> {
  if (!upstream.down) throw new Error("the upstream must be down for the executions to fail");
  const ids: string[] = [];
  for (let order = 0; order < count; order++) ids.push(await execute(stack, workflowId, order));
  for (const id of ids) {
    const entry = await loggedEntry(stack, id);
    if (entry.level !== "error") throw new Error(`execution ${id} was logged ${entry.level}, not error`);
  }
  return ids;
}

async function execute(stack: FlowlogStack, workflowId: string, order: number): Promise<string> {
  const { executionId } = await stack.post<{ executionId: string }>(
    `/api/v1/workflows/${workflowId}/execute`,
    {
      input: { order },
      async: true,
    },
  );
  return executionId;
}

async function retry(stack: FlowlogStack, executionId: string, body: { from: string; version: string }) {
  const { executionId: retried } = await stack.post<{ executionId: string }>(
    `/api/v1/executions/${executionId}:retry`,
    body,
  );
  return retried;
}

/** What a listed entry tells of a run. */
interface Entry {
  level: string;
  startedAt: string;
  endedAt: string;
  totalDurationMs: number;
  /** Tokens are left out when there are none (proto3 JSON). */
  cost: { total: number; tokens?: { total: number } };
}

/** The execution's entry, once it is listed; with `details=full`, its tokens too (D9). */
async function loggedEntry(stack: FlowlogStack, executionId: string, details = "basic"): Promise<Entry> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { data } = await getJson<{ data: Entry[] }>(
      stack,
      `/api/v1/logs?workspaceId=${stack.workspaceId}&executionId=${executionId}&limit=1&details=${details}`,
    );
    if (data[0]) return data[0];
    if (Date.now() > deadline) throw new Error(`execution ${executionId} was not logged within a minute`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

interface Side {
  name: string;
  /** The blocks it runs: their upstream calls are what it must make. */
  blocks: BlockSpec[];
  /** Starts the round's execution of this side; its execution id. */
  start(round: number): Promise<string>;
}

interface Run {
  /** From the call until the entry was listed. */
  seconds: number;
  /**
   * Where those went, in milliseconds: until the call answered, until the workflow started (the entry's
   * startedAt), the run itself (its totalDurationMs), and from its end until the entry was listed.
   */
  phases: { call: number; toStart: number; engine: number; toListed: number };
  entry: Entry;
}

async function timedRun(stack: FlowlogStack, upstream: Upstream, side: Side, round: number): Promise<Run> {
  const calls = new Map(upstream.calls);
  const calledAt = Date.now();
  let answeredAt = 0;
  const { value: executionId, seconds } = await timed(async () => {
    const started = await side.start(round);
    answeredAt = Date.now();
    await loggedEntry(stack, started);
    return started;
  });
  const listedAt = Date.now();
  // Read again whole, off the clock: the basic entry the clock waits on has the cost's total only.
  const entry = await loggedEntry(stack, executionId, "full");
  if (entry.level !== "info") throw new Error(`${side.name} was logged ${entry.level}, not info`);
  const made = [...upstream.calls].filter(([path, n]) => n > (calls.get(path) ?? 0)).map(([path]) => path);
  const expected = side.blocks.filter((block) => block.type === "api").map((block) => block.target);
  if (made.sort().join() !== expected.sort().join()) {
    throw new Error(`${side.name} called ${made.join(", ")}; its blocks call ${expected.join(", ")}`);
  }
  const phases = {
    call: answeredAt - calledAt,
    toStart: Date.parse(entry.startedAt) - calledAt,
    engine: entry.totalDurationMs,
    toListed: listedAt - Date.parse(entry.endedAt),
  };
  return { seconds, phases, entry };
}

const median = (values: number[]) => distribution(values).p50;
const dollars = (value: number) => `$${value.toPrecision(3)}`;

function sidesTable(sides: Side[], runs: Map<Side, Run[]>, rounds: number): Table {
  return {
    title: `resume: a nine-block workflow failed at its fifth block, ${rounds} rounds of three executions`,
    columns: [
      "side",
      "blocks run",
      "wall p50 ms",
      "min",
      "max",
      "call",
      "to start",
      "run",
      "to listed",
      "cost",
      "tokens",
    ],
    rows: sides.map((side) => {
      const of = runs.get(side) ?? [];
      const wall = distribution(of.map((run) => run.seconds * 1000));
      const phase = (name: keyof Run["phases"]) => ms(median(of.map((run) => run.phases[name])));
      const first = of[0]?.entry;
      return [
        side.name,
        side.blocks.map((block) => block.id).join(" "),
        ms(wall.p50),
        ms(Math.min(...of.map((run) => run.seconds * 1000))),
        ms(wall.max),
        phase("call"),
        phase("toStart"),
        phase("engine"),
        phase("toListed"),
        first ? dollars(first.cost.total) : "-",
        first ? (first.cost.tokens?.total ?? 0) : "-",
      ];
    }),
    note:
      `Wall: from the call (retry or execute, async) until the entry is listed, looked for every ${pollMs} ms. ` +
      "Its phases (p50 ms): until the call answered, until the workflow started (the entry's startedAt), the " +
      "run (its totalDurationMs), and from the run's end until the entry was listed. " +
      `Each HTTP block's upstream answers in ${upstreamLatencyMs} ms, the model in ${modelLatencyMs} ms. ` +
      "Cost and tokens are the first counted run's; a resume reuses the agent block before charge (D47: a " +
      "reused one cost once).",
  };
}

function goalTable(sides: Side[], runs: Map<Side, Run[]>, rounds: number): Table {
  const [resume, baseline, whole] = sides.map((side) => runs.get(side) ?? []) as [Run[], Run[], Run[]];
  const row = (
    what: string,
    against: Run[],
    goal: string,
    meets: (r: number) => boolean,
    of: (r: Run) => number,
  ) => {
    const ratios = resume.map((run, n) => of(run) / of(against[n] as Run));
    const mid = median(ratios);
    return [
      what,
      goal,
      // Three decimals: both sides run the same blocks, so a median near 1 would read 1.00x and still miss.
      `${mid.toFixed(3)}x`,
      goal === "-" ? "-" : meets(mid) ? "met" : "missed",
      ratios.map(ratio).join(" / "),
      goal === "-" ? "-" : `${ratios.filter(meets).length} of ${ratios.length}`,
    ];
  };
  const atMostOne = (r: number) => r <= 1;
  return {
    title: `resume goal: ${rounds} rounds, the resume against the same round's fresh run of charge onwards`,
    columns: [
      "resume / against",
      "goal",
      "median round",
      "verdict",
      "rounds' ratios, in order",
      "rounds meeting it",
    ],
    rows: [
      row("wall time / fresh charge onwards", baseline, "<= 1.00x", atMostOne, (run) => run.seconds),
      row("cost / fresh charge onwards", baseline, "<= 1.00x", atMostOne, (run) => run.entry.cost.total),
      row("run's duration / fresh charge onwards", baseline, "-", atMostOne, (run) => run.phases.engine),
      row("wall time / retry from the start", whole, "-", atMostOne, (run) => run.seconds),
      row("cost / retry from the start", whole, "-", atMostOne, (run) => run.entry.cost.total),
    ],
    note:
      "Goal (issue 54): a resume from the failed block costs no more than the blocks it runs again, read as " +
      "the median round's ratio of wall times, and of the entries' costs. The three sides of a round run " +
      "one after the other, the order turned every round, so a drift of the machine favours none.",
  };
}
