import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AgentBlockError, type AgentCallSettings, runAgentBlock } from "../src/blocks/agent.js";

/**
 * The agent block against a real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions wire
 * protocol: the one stand-in these tests allow, as a language-model provider lives outside the machine.
 */

const apiKey = "sk-test-0123456789abcdef";

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

type Reply = (response: ServerResponse) => void;

const received: Received[] = [];
let replies: Reply[] = [];
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer(async (request, response) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    received.push({
      method: request.method ?? "",
      url: request.url ?? "",
      headers: request.headers,
      body: JSON.parse(text),
    });
    const reply =
      replies.shift() ?? ((res: ServerResponse) => json(res, 500, { error: { message: "no reply" } }));
    reply(response);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  server.close();
});

beforeEach(() => {
  received.length = 0;
  replies = [];
});

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { "content-type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

function completion(model: string, content: string, usage: Record<string, number> | undefined): Reply {
  return (response) =>
    json(response, 200, {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1_767_000_000,
      model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      ...(usage ? { usage } : {}),
    });
}

const usage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});

const status = (code: number, headers: Record<string, string> = {}): Reply => {
  return (response) =>
    json(response, code, { error: { message: `status ${code}`, type: "server_error" } }, headers);
};

/** Waits recorded instead of slept, and the midpoint of the jitter, so delays can be checked exactly. */
function recordedWaits(extra: Partial<AgentCallSettings> = {}) {
  const waits: number[] = [];
  const options: AgentCallSettings = {
    sleep: async (ms) => {
      waits.push(ms);
    },
    random: () => 0.5,
    allowPrivateNetworks: true,
    ...extra,
  };
  return { waits, options };
}

const provider = () => ({ baseUrl, apiKey });
const config = {
  model: "gpt-4o",
  systemPrompt: "Be brief.",
  prompt: "Classify: printer on fire",
  temperature: 0.2,
};

async function agentError(promise: Promise<unknown>): Promise<AgentBlockError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AgentBlockError) return error;
    throw error;
  }
  throw new Error("expected the agent block to fail");
}

describe("agent block: the chat-completions call (D13)", () => {
  it("posts model and messages with the key as a bearer token to {baseUrl}/v1/chat/completions", async () => {
    replies = [completion("gpt-4o-2024-08-06", "urgent", usage(12, 1))];
    const { options } = recordedWaits();
    await runAgentBlock(
      {
        ...config,
        messages: [
          { role: "user", content: "Earlier question" },
          { role: "assistant", content: "Earlier answer" },
        ],
        maxTokens: 50,
      },
      { baseUrl: `${baseUrl}/`, apiKey },
      options,
    );
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.method).toBe("POST");
    expect(request?.url).toBe("/v1/chat/completions");
    expect(request?.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(request?.body).toEqual({
      model: "gpt-4o",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Earlier question" },
        { role: "assistant", content: "Earlier answer" },
        { role: "user", content: "Classify: printer on fire" },
      ],
      temperature: 0.2,
      max_tokens: 50,
    });
  });

  it("leaves out what the config does not set, and a prompt that resolved to JSON is sent as its text", async () => {
    replies = [completion("gpt-4o", "ok", usage(1, 1))];
    await runAgentBlock({ model: "gpt-4o", prompt: { ticket: 7 } }, provider(), recordedWaits().options);
    expect(received[0]?.body).toEqual({
      model: "gpt-4o",
      messages: [{ role: "user", content: '{"ticket":7}' }],
    });
  });

  it("sends no Authorization header when the provider needs no key", async () => {
    replies = [completion("llama3", "ok", usage(1, 1))];
    await runAgentBlock(config, { baseUrl, apiKey: "" }, recordedWaits().options);
    expect(received[0]?.headers.authorization).toBeUndefined();
  });
});

describe("agent block: tokens and cost from usage and the price table (D13, D17)", () => {
  it("reports content, the model as answered, tokens and cost priced by the table", async () => {
    replies = [completion("gpt-4o-2024-08-06", "urgent", usage(1_000, 500))];
    const output = await runAgentBlock(config, provider(), recordedWaits().options);
    // gpt-4o: 2.5 USD per million input tokens, 10 per million output tokens.
    expect(output).toEqual({
      content: "urgent",
      model: "gpt-4o-2024-08-06",
      tokens: { prompt: 1_000, completion: 500, total: 1_500 },
      cost: { input: 0.0025, output: 0.005, total: 0.0075 },
    });
  });

  it("prices with the table it is given, and sums the tokens when usage has no total", async () => {
    replies = [completion("house-model", "hi", { prompt_tokens: 2_000_000, completion_tokens: 1_000_000 })];
    const { options } = recordedWaits({ prices: { "house-model": { input: 1, output: 3 } } });
    const output = await runAgentBlock({ ...config, model: "house-model" }, provider(), options);
    expect(output.tokens).toEqual({ prompt: 2_000_000, completion: 1_000_000, total: 3_000_000 });
    expect(output.cost).toEqual({ input: 2, output: 3, total: 5 });
  });

  it("an unpriced model costs nothing rather than failing the execution", async () => {
    replies = [completion("mystery-1", "hi", usage(10, 10))];
    const output = await runAgentBlock(
      { ...config, model: "mystery-1" },
      provider(),
      recordedWaits().options,
    );
    expect(output.cost).toEqual({ input: 0, output: 0, total: 0 });
  });
});

describe("agent block: retries (429, 5xx, timeouts) with backoff", () => {
  it("a 429 then a success is retried once, after the jittered backoff", async () => {
    replies = [status(429), completion("gpt-4o", "done", usage(3, 2))];
    const { waits, options } = recordedWaits({ baseDelayMs: 1_000 });
    const output = await runAgentBlock(config, provider(), options);
    expect(output.content).toBe("done");
    expect(received).toHaveLength(2);
    expect(waits).toEqual([500]);
  });

  it("5xx answers are retried with exponential backoff, and Retry-After is a floor", async () => {
    replies = [
      status(503),
      status(500),
      status(429, { "retry-after": "7" }),
      completion("gpt-4o", "done", usage(3, 2)),
    ];
    const { waits, options } = recordedWaits({ baseDelayMs: 1_000, maxDelayMs: 30_000 });
    await runAgentBlock(config, provider(), options);
    expect(received).toHaveLength(4);
    expect(waits).toEqual([500, 1_000, 7_000]);
  });

  it("gives up after the configured retries, naming the status and the attempts", async () => {
    replies = [status(502), status(502), status(502), status(502)];
    const { waits, options } = recordedWaits({ retries: 2 });
    const error = await agentError(runAgentBlock(config, provider(), options));
    expect(received).toHaveLength(3);
    expect(waits).toHaveLength(2);
    expect(error.code).toBe("provider_http_error");
    expect(error.status).toBe(502);
    expect(error.message).toBe("agent provider answered HTTP 502: status 502 (after 3 attempts)");
  });

  it("a provider that does not answer in time is retried, then fails as a timeout", async () => {
    replies = [() => {}, () => {}];
    const { options } = recordedWaits({ retries: 1, timeoutMs: 200 });
    const error = await agentError(runAgentBlock(config, provider(), options));
    expect(received).toHaveLength(2);
    expect(error.code).toBe("provider_timeout");
    expect(error.message).toBe("agent provider did not answer within 200 ms (after 2 attempts)");
  });
});

describe("agent block: errors are clear and never hold the key (D24)", () => {
  it("a 401 is not retried, and the provider's message is kept without the key it echoed", async () => {
    replies = [
      (response) =>
        json(response, 401, {
          error: { message: `Incorrect API key provided: ${apiKey}.`, type: "invalid_request_error" },
        }),
    ];
    const { waits, options } = recordedWaits();
    const error = await agentError(runAgentBlock(config, provider(), options));
    expect(received).toHaveLength(1);
    expect(waits).toEqual([]);
    expect(error.code).toBe("provider_http_error");
    expect(error.status).toBe(401);
    expect(error.message).toBe("agent provider answered HTTP 401: Incorrect API key provided: [redacted].");
    expect(error.message).not.toContain(apiKey);
  });

  it("a provider echoing the key URL-encoded, base64 or JSON-escaped leaks it in none of those forms", async () => {
    const key = 'sk-live "k3y"/+with space';
    const echoes = [
      encodeURIComponent(key),
      Buffer.from(key).toString("base64"),
      Buffer.from(`user:${key}`).toString("base64"),
      JSON.stringify(key).slice(1, -1),
    ];
    replies = [(response) => json(response, 401, { error: { message: `refused: ${echoes.join(" | ")}` } })];
    const error = await agentError(runAgentBlock(config, { baseUrl, apiKey: key }, recordedWaits().options));
    expect(error.message).toMatch(/^agent provider answered HTTP 401: refused: .*\[redacted\]/);
    for (const echo of echoes) expect(error.message).not.toContain(echo);
  });

  it("a 400 with a plain-text body is not retried and carries that text", async () => {
    replies = [
      (response) => {
        response.writeHead(400, { "content-type": "text/plain" });
        response.end("model not found\n");
      },
    ];
    const error = await agentError(runAgentBlock(config, provider(), recordedWaits().options));
    expect(received).toHaveLength(1);
    expect(error.message).toBe("agent provider answered HTTP 400: model not found");
  });

  it("a redirect is not followed, so the key goes to the configured provider only", async () => {
    replies = [(response) => json(response, 307, {}, { location: "http://127.0.0.1:1/elsewhere" })];
    const error = await agentError(runAgentBlock(config, provider(), recordedWaits().options));
    expect(received).toHaveLength(1);
    expect(error.status).toBe(307);
  });

  it.each<[string, Reply, string]>([
    [
      "an answer that is not JSON",
      (response) => {
        response.writeHead(200, { "content-type": "text/html" });
        response.end("<html>gateway</html>");
      },
      "agent provider's answer is not a chat completion: (root): Invalid input: expected object, received undefined",
    ],
    [
      "an answer without usage",
      completion("gpt-4o", "hi", undefined),
      "agent provider's answer is not a chat completion: usage: Invalid input: expected object, received undefined",
    ],
    [
      "an answer without choices",
      (response) => json(response, 200, { model: "gpt-4o", choices: [], usage: usage(1, 1) }),
      "agent provider's answer is not a chat completion: choices: Too small: expected array to have >=1 items",
    ],
  ])("%s fails the block without a retry", async (_, reply, message) => {
    replies = [reply];
    const error = await agentError(runAgentBlock(config, provider(), recordedWaits().options));
    expect(received).toHaveLength(1);
    expect(error.code).toBe("provider_bad_answer");
    expect(error.message).toBe(message);
  });

  it.each<[string, unknown, string]>([
    [
      "no model",
      { prompt: "hi" },
      "agent block config: model: Invalid input: expected string, received undefined",
    ],
    [
      "no message at all",
      { model: "gpt-4o" },
      "agent block config: (root): give a prompt, a systemPrompt or messages",
    ],
    [
      "a temperature out of range",
      { ...config, temperature: 3 },
      "agent block config: temperature: Too big: expected number to be <=2",
    ],
  ])("a config with %s fails before any request", async (_, badConfig, message) => {
    const error = await agentError(runAgentBlock(badConfig, provider(), recordedWaits().options));
    expect(received).toHaveLength(0);
    expect(error.code).toBe("invalid_config");
    expect(error.message).toBe(message);
  });

  it("a base URL that is not http(s) fails before any request", async () => {
    const error = await agentError(
      runAgentBlock(config, { baseUrl: "file:///etc", apiKey }, recordedWaits().options),
    );
    expect(error.code).toBe("invalid_config");
    expect(error.message).not.toContain(apiKey);
  });
});

describe("agent block: outbound requests go through the D22 guard", () => {
  it("a provider on a private address is refused without a retry unless private networks are allowed", async () => {
    const { waits, options } = recordedWaits({ allowPrivateNetworks: false });
    const error = await agentError(runAgentBlock(config, provider(), options));
    expect(received).toHaveLength(0);
    expect(waits).toEqual([]);
    expect(error.code).toBe("outbound_refused");
    expect(error.message).toContain("loopback");
  });

  it("an unreachable provider is retried, then named by its origin only", async () => {
    const { waits, options } = recordedWaits({ retries: 1 });
    const error = await agentError(
      runAgentBlock(config, { baseUrl: "http://127.0.0.1:1/secret-path", apiKey }, options),
    );
    expect(waits).toHaveLength(1);
    expect(error.code).toBe("provider_unreachable");
    expect(error.message).toMatch(
      /^agent provider http:\/\/127\.0\.0\.1:1 unreachable: .+ \(after 2 attempts\)$/,
    );
  });
});
