import { describe, expect, it } from "vitest";
import {
  checkReferenceSyntax,
  findReferences,
  normalizeBlockName,
  ReferenceResolutionError,
  type ReferenceScope,
  referenceAt,
  resolveReferences,
} from "../src/engine/references.js";

const scope: ReferenceScope = {
  outputs: {
    api: {
      data: { items: [{ id: 7, tags: ["a", "b"] }, { id: 8 }], count: 2, empty: null, "x-id": "h1" },
      status: 200,
      headers: { "content-type": "application/json" },
    },
    fetchticket: { data: { subject: "Login fails" } },
    "score-v2": { content: "82" },
  },
  env: { SERVICE_TOKEN: "s3cret-token-value", REGION: "eu" },
};

function resolutionError(value: unknown): ReferenceResolutionError {
  try {
    resolveReferences(value, scope);
  } catch (error) {
    if (error instanceof ReferenceResolutionError) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(value)} not to resolve`);
}

describe("block names in references (D14)", () => {
  it.each([
    ["Fetch Ticket", "fetchticket"],
    ["  API  call ", "apicall"],
    ["api", "api"],
    ["Score-V2", "score-v2"],
  ])("%j is referenced as %j", (name, normalized) => {
    expect(normalizeBlockName(name)).toBe(normalized);
  });

  it("a reference matches the block name case-insensitively", () => {
    expect(resolveReferences("<FetchTicket.data.subject>", scope)).toBe("Login fails");
  });
});

describe("resolving <block.path> and {{NAME}} (D14)", () => {
  it.each<[string, unknown]>([
    ["<api.status>", 200],
    ["<api.data>", (scope.outputs.api as { data: unknown }).data],
    ["<api.data.count>", 2],
    ["<api.data.empty>", null],
    ["<api.data.items[1].id>", 8],
    ["<api.data.items.1.id>", 8],
    ["<api.data.items[0].tags[1]>", "b"],
    ["<api.data.x-id>", "h1"],
    ["<api.headers.content-type>", "application/json"],
    ["<score-v2.content>", "82"],
    ["{{REGION}}", "eu"],
    ["{{ REGION }}", "eu"],
  ])("a string that is exactly %j becomes the value with its own type", (text, value) => {
    expect(resolveReferences(text, scope)).toEqual(value);
  });

  it.each([
    ["status <api.status>", "status 200"],
    ["count=<api.data.count>, first=<api.data.items[0].id>", "count=2, first=7"],
    ["<api.data.items[1]>!", '{"id":8}!'],
    ["empty: <api.data.empty>", "empty: null"],
    ["Bearer {{SERVICE_TOKEN}}", "Bearer s3cret-token-value"],
    ["https://{{REGION}}.example.com/<fetchticket.data.subject>", "https://eu.example.com/Login fails"],
    [" <api.status>", " 200"],
  ])("inside longer text %j becomes %j", (text, resolved) => {
    expect(resolveReferences(text, scope)).toBe(resolved);
  });

  it("resolves deep through arrays and objects, leaving keys and non-strings as they are", () => {
    const config = {
      url: "https://x.test/items/<api.data.items[0].id>",
      headers: { Authorization: "Bearer {{SERVICE_TOKEN}}", "<api.status>": "key kept" },
      body: { ids: ["<api.data.items[0].id>", "<api.data.items[1].id>"], n: 3, ok: true, none: null },
    };
    expect(resolveReferences(config, scope)).toEqual({
      url: "https://x.test/items/7",
      headers: { Authorization: "Bearer s3cret-token-value", "<api.status>": "key kept" },
      body: { ids: [7, 8], n: 3, ok: true, none: null },
    });
  });

  it("text that a reference brings in is never resolved again", () => {
    const injected: ReferenceScope = {
      outputs: { user: { name: "{{SERVICE_TOKEN}} <api.status>" } },
      env: {},
    };
    expect(resolveReferences("hello <user.name>", injected)).toBe("hello {{SERVICE_TOKEN}} <api.status>");
  });

  it("without an environment in scope, {{NAME}} stays as written (the workflow never holds secrets, D24)", () => {
    const outputsOnly: ReferenceScope = { outputs: scope.outputs };
    expect(resolveReferences("Bearer {{SERVICE_TOKEN}} for <api.status>", outputsOnly)).toBe(
      "Bearer {{SERVICE_TOKEN}} for 200",
    );
  });

  it.each([
    "a < b and c > d",
    "<b>bold</b>",
    "<br/>",
    '<a href="x.y">link</a>',
    "mail <john.doe@example.com>",
    "<start>",
    "x<y",
    "<.data>",
    "< api.data>",
    "{single} braces",
  ])("%j is text, not a reference", (text) => {
    expect(resolveReferences(text, scope)).toBe(text);
    expect(findReferences(text)).toEqual({ blocks: [], env: [] });
  });
});

describe("unresolvable references fail with a message naming them (D14)", () => {
  it.each([
    ["<nosuch.data>", 'no block named "nosuch" has run before this one'],
    ["<api.body>", "api (object) has no .body"],
    ["<api.data.items[5]>", "api.data.items (array) has no [5]"],
    ["<api.data.items.first>", "api.data.items (array) has no .first"],
    ["<api.status.code>", "api.status (number) has no .code"],
    ["<api.data.empty.x>", "api.data.empty (null) has no .x"],
    ["{{MISSING}}", "environment variable MISSING is not set"],
  ])("%j: %s", (reference, problem) => {
    const error = resolutionError(`before ${reference} after`);
    expect(error.reference).toBe(reference);
    expect(error.message).toBe(`reference ${reference} cannot be resolved: ${problem}`);
  });

  it.each(["<api.constructor>", "<api.data.__proto__>", "<api.data.toString>", "<api.data.items.length>"])(
    "%j does not reach past the output's own values",
    (reference) => {
      expect(resolutionError(reference).reference).toBe(reference);
    },
  );

  it("inherited names of the outputs map and the environment are not blocks or variables", () => {
    expect(resolutionError("<constructor.name>").message).toContain('no block named "constructor"');
    expect(resolutionError("{{toString}}").message).toContain("environment variable toString is not set");
  });

  it("messages name the type met, never a value", () => {
    const error = resolutionError("<api.data.items[0].tags.secret> {{SERVICE_TOKEN}}");
    expect(error.message).not.toContain("s3cret");
    expect(error.message).not.toContain('"a"');
  });
});

describe("findReferences: what a config depends on", () => {
  it("lists normalized block names and environment variables once each, in order", () => {
    const config = {
      url: "https://x.test/<Fetch_Ticket.data.id>?r={{REGION}}",
      body: ["<api.data>", "<API.status>", "{{TOKEN}} {{REGION}}"],
      expression: "<api.status> == 200 && <score.content> >= 70",
    };
    expect(findReferences(config)).toEqual({
      blocks: ["fetch_ticket", "api", "score"],
      env: ["REGION", "TOKEN"],
    });
  });
});

describe("checkReferenceSyntax: validation on save", () => {
  it.each([
    "<api.data> and {{TOKEN}} and {{ TOKEN }}",
    "a < b, <b>, x<y, 3 <= 4",
    "mail <john.doe@example.com>",
    '<a href="x.y">',
  ])("%j has no problem", (text) => {
    expect(checkReferenceSyntax(text)).toEqual([]);
  });

  it.each([
    ["value: <api.data", '"<api.data" is not closed with >'],
    ["<api.data more", '"<api.data" is not closed with >'],
    ["<api..data>", '"<api..data>" is not a valid reference: write <block.path> with .key or [index] steps'],
    [
      "<api.data[x]>",
      '"<api.data[x]>" is not a valid reference: write <block.path> with .key or [index] steps',
    ],
    ["<api.>", '"<api.>" is not a valid reference: write <block.path> with .key or [index] steps'],
    ["Bearer {{TOKEN", '"{{TOKEN" is not closed with }}'],
    [
      "{{MY-TOKEN}}",
      '"{{MY-TOKEN}}" is not an environment variable: write {{NAME}} with letters, digits and _',
    ],
    ["{{}}", '"{{}}" is not an environment variable: write {{NAME}} with letters, digits and _'],
  ])("%j: %s", (text, problem) => {
    expect(checkReferenceSyntax(text)).toEqual([problem]);
  });

  it("names where in the config each problem sits", () => {
    const config = { headers: { Authorization: "Bearer {{TOKEN" }, body: { ids: ["ok", "<api.items[x]>"] } };
    expect(checkReferenceSyntax(config)).toEqual([
      'headers.Authorization: "{{TOKEN" is not closed with }}',
      'body.ids[1]: "<api.items[x]>" is not a valid reference: write <block.path> with .key or [index] steps',
    ]);
  });
});

describe("referenceAt: the reading shared with the condition language", () => {
  it("reads the reference that starts exactly at an index", () => {
    expect(referenceAt("x == <api.status>", 5)).toBe("<api.status>");
    expect(referenceAt("x == {{REGION}}!", 5)).toBe("{{REGION}}");
    expect(referenceAt("x == <api.status>", 4)).toBeUndefined();
    expect(referenceAt("1 < 2", 2)).toBeUndefined();
  });
});
