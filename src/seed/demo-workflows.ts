import type { JsonObject } from "@bufbuild/protobuf";
import type { BlockJson, EdgeJson, WorkflowStateJson } from "../engine/json-shapes.js";
import type { WorkflowRecord } from "../store/records.js";
import type { Random } from "./random.js";

/** The models demo agents use, spread over workflows so the model filter has several to choose from. */
const demoModels = [
  "gpt-4o-mini",
  "claude-sonnet-4",
  "gpt-4o",
  "gemini-2.0-flash",
  "claude-3-5-haiku",
  "gpt-4.1",
];

interface Template {
  name: string;
  description: string;
  state(model: (agent: number) => string): WorkflowStateJson;
}

const block = (type: string, name: string, config: JsonObject): BlockJson => ({
  type,
  name,
  config,
  enabled: true,
});

const edge = (source: string, target: string, sourceHandle?: string): EdgeJson =>
  sourceHandle === undefined ? { source, target } : { source, target, sourceHandle };

const agent = (name: string, model: string, prompt: string): BlockJson =>
  block("agent", name, { model, systemPrompt: "You are a concise assistant.", prompt, temperature: 0.2 });

const prompts = {
  classify: "Classify the urgency of: <fetchticket.data>",
  summarize: "Summarise in two sentences: <loop.item>",
  digest: "Write a digest from: <summarize.content>",
  score: "Score this lead from 0 to 100: <lookup.data>",
  answer: "<start.message>",
};

/**
 * What the demo agents answer, by the prompt they are given, for the seeder's simulated agent: replies
 * the workflows' conditions can read (a class, a score), so runs take every branch.
 */
export const demoAgentReplies: Readonly<Record<string, readonly string[]>> = {
  [prompts.classify]: ["urgent", "routine", "routine", "routine"],
  [prompts.summarize]: [
    "The billing service moves to usage-based pricing in March. Existing plans keep their price for a year.",
    "Tuesday's outage lasted 40 minutes and hit EU workspaces. A faulty config push was rolled back.",
  ],
  [prompts.digest]: ["Three articles cover the new pricing; two cover the outage on Tuesday."],
  [prompts.score]: ["82", "91", "74", "65", "38"],
  [prompts.answer]: [
    "Open Settings, then API keys, and create a key for the workspace.",
    "The endpoint answered 410: the webhook URL was removed. Update it under Triggers.",
    "The free plan includes 1,000 executions a month and 7 days of logs.",
  ],
};

/** A two-way condition (ConditionConfig of the engine): the "if" branch when the expression holds, else "else". */
const condition = (name: string, expression: string): BlockJson =>
  block("condition", name, { conditions: [{ id: "if", expression }, { id: "else" }] });

const api = (name: string, method: string, url: string): BlockJson =>
  block("api", name, { method, url, headers: { Authorization: "Bearer {{SERVICE_TOKEN}}" } });

/**
 * Small graphs in the shape of D13 (starter -> api -> agent -> condition -> response, with a loop, a
 * parallel, a chat-only and an agent-less variant), so the logs show every span shape and zero-cost runs.
 */
const templates: Template[] = [
  {
    name: "Support ticket triage",
    description: "Fetches a ticket, classifies its urgency and escalates urgent ones.",
    state: (model) => ({
      blocks: {
        starter: block("starter", "Start", { inputFormat: [{ name: "ticketId", type: "string" }] }),
        fetch: api("Fetch ticket", "GET", "https://helpdesk.example.com/api/tickets/{ticketId}"),
        classify: agent("Classify", model(0), prompts.classify),
        urgent: condition("Is urgent", '<classify.content> == "urgent"'),
        escalate: block("response", "Escalate", { data: { escalated: true, summary: "<classify.content>" } }),
        reply: block("response", "Reply", { data: { escalated: false, summary: "<classify.content>" } }),
      },
      edges: [
        edge("starter", "fetch"),
        edge("fetch", "classify"),
        edge("classify", "urgent"),
        edge("urgent", "escalate", "if"),
        edge("urgent", "reply", "else"),
      ],
      loops: {},
      parallels: {},
    }),
  },
  {
    name: "Daily news digest",
    description: "Summarises each new article, then writes one digest.",
    state: (model) => ({
      blocks: {
        starter: block("starter", "Start", {}),
        list: api("List articles", "GET", "https://news.example.com/api/articles?since=24h"),
        summarize: agent("Summarize", model(0), prompts.summarize),
        digest: agent("Write digest", model(1), prompts.digest),
        respond: block("response", "Respond", { data: { digest: "<writedigest.content>" } }),
      },
      edges: [
        edge("starter", "list"),
        edge("list", "articles"),
        edge("articles", "digest"),
        edge("digest", "respond"),
      ],
      loops: { articles: { type: "forEach", nodes: ["summarize"], collection: "<listarticles.data.items>" } },
      parallels: {},
    }),
  },
  {
    name: "Lead enrichment",
    description: "Looks a lead up in three sources at once and scores it.",
    state: (model) => ({
      blocks: {
        starter: block("starter", "Start", { inputFormat: [{ name: "email", type: "string" }] }),
        lookup: api("Lookup", "POST", "https://enrich.example.com/v2/lookup"),
        score: agent("Score", model(0), prompts.score),
        qualified: condition("Qualified", "<score.content> >= 70"),
        accept: block("response", "Accept", { data: { qualified: true } }),
        reject: block("response", "Reject", { data: { qualified: false } }),
      },
      edges: [
        edge("starter", "sources"),
        edge("lookup", "score"),
        edge("sources", "qualified"),
        edge("qualified", "accept", "if"),
        edge("qualified", "reject", "else"),
      ],
      loops: {},
      parallels: { sources: { type: "count", nodes: ["lookup", "score"], count: 3 } },
    }),
  },
  {
    name: "Uptime check",
    description: "Pings the billing service and reports its health.",
    state: () => ({
      blocks: {
        starter: block("starter", "Start", {}),
        ping: api("Ping", "GET", "https://billing.example.com/healthz"),
        healthy: condition("Healthy", "<ping.status> == 200"),
        up: block("response", "Up", { data: { healthy: true } }),
        down: block("response", "Down", { data: { healthy: false, status: "<ping.status>" } }),
      },
      edges: [
        edge("starter", "ping"),
        edge("ping", "healthy"),
        edge("healthy", "up", "if"),
        edge("healthy", "down", "else"),
      ],
      loops: {},
      parallels: {},
    }),
  },
  {
    name: "Docs assistant",
    description: "Answers questions about the product documentation.",
    state: (model) => ({
      blocks: {
        starter: block("starter", "Start", { inputFormat: [{ name: "message", type: "string" }] }),
        answer: agent("Answer", model(0), prompts.answer),
        respond: block("response", "Respond", { data: { answer: "<answer.content>" } }),
      },
      edges: [edge("starter", "answer"), edge("answer", "respond")],
      loops: {},
      parallels: {},
    }),
  },
];

export interface DemoWorkflowsRequest {
  workspaceId: string;
  /** Folder of the n-th new workflow: folders[n % folders.length]; null keeps it at the top level. */
  folders: (string | null)[];
  /** How many workflows the workspace has already, so new names and models continue from there. */
  existing: number;
  count: number;
  now: number;
}

export function demoWorkflows(rng: Random, request: DemoWorkflowsRequest): WorkflowRecord[] {
  return Array.from({ length: request.count }, (_, n) => {
    const index = request.existing + n;
    const template = templates[index % templates.length] as Template;
    const round = Math.floor(index / templates.length);
    const createdAt = request.now - rng.int(60, 120) * 86_400_000;
    return {
      id: rng.id("wf"),
      workspaceId: request.workspaceId,
      folderId: request.folders[n % request.folders.length] ?? null,
      name: round === 0 ? template.name : `${template.name} ${round + 1}`,
      description: template.description,
      version: 1,
      state: template.state(
        (agentIndex) => demoModels[(index + 2 * agentIndex) % demoModels.length] as string,
      ),
      createdAt,
      updatedAt: createdAt,
    };
  });
}
