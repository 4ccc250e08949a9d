import { describe, expect, it } from "vitest";
import {
  ConditionConfigError,
  ConditionEvaluationError,
  ConditionSyntaxError,
  checkConditionConfig,
  conditionConfigOf,
  evaluateCondition,
  parseCondition,
  selectConditionBranch,
} from "../src/engine/condition.js";
import { ReferenceResolutionError, type ReferenceScope } from "../src/engine/references.js";

const scope: ReferenceScope = {
  outputs: {
    api: {
      status: 200,
      data: { items: [1, 2, 3], tags: ["new", "vip"], name: "Ada Lovelace", active: true, none: null },
      headers: { "content-type": "application/json" },
      error: null,
    },
    classify: { content: "urgent" },
    score: { content: "82" },
    injected: { content: '" || true || "' },
  },
  env: { MODE: "prod", LIMIT: "100" },
};

const holds = (expression: string) => evaluateCondition(expression, scope);

describe("condition expressions: values and comparisons (D13)", () => {
  it.each<[string, boolean]>([
    ["<api.status> == 200", true],
    ["<api.status> != 200", false],
    ["<api.status> >= 200 && <api.status> < 300", true],
    ["<api.status> > 200", false],
    ["<api.status> <= 199", false],
    ['<classify.content> == "urgent"', true],
    ["<classify.content> == 'urgent'", true],
    ['"abc" < "abd"', true],
    ["1.5e1 == 15", true],
    ["-<api.status> == -200", true],
    ["<api.data.active> == true", true],
    ["<api.data.none> == null", true],
    ["<api.error> == null", true],
    ["<api.data.items> == <api.data.items>", true],
    ["<api.data.tags[1]> == 'vip'", true],
    ["{{MODE}} == 'prod'", true],
    ["{{LIMIT}} > 99", true],
    ['"yes" == true', false],
    ["0 == false", false],
    ["null == false", false],
  ])("%s is %s", (expression, expected) => {
    expect(holds(expression)).toBe(expected);
  });

  it.each<[string, boolean]>([
    ["<score.content> >= 70", true],
    ["<score.content> == 82", true],
    ["70 < <score.content>", true],
    ['<score.content> == "82"', true],
    ['<score.content> > "9"', false],
    ['"" == 0', false],
    ['" " == 0', false],
  ])("text that reads as a number meets a number as a number: %s is %s", (expression, expected) => {
    expect(holds(expression)).toBe(expected);
  });

  it.each<[string, boolean]>([
    ['<api.data.name> contains "Love"', true],
    ['<api.data.name> startsWith "Ada"', true],
    ['<api.data.name> endsWith "Ada"', false],
    ['<api.data.tags> contains "vip"', true],
    ["<api.data.items> contains 4", false],
    ['<api.headers.content-type> startsWith "application/json"', true],
  ])("string and list tests: %s is %s", (expression, expected) => {
    expect(holds(expression)).toBe(expected);
  });
});

describe("condition expressions: precedence and truth", () => {
  it.each<[string, boolean]>([
    ["true || false && false", true],
    ["(true || false) && false", false],
    ["!false && false", false],
    ["!(false && false)", true],
    ["!!<api.data.active>", true],
    ["1 == 1 && 2 == 2 || 1 == 2", true],
    ["1 == 2 || 1 == 2 && true", false],
    ["((((true))))", true],
    ["!<api.error>", true],
  ])("%s is %s", (expression, expected) => {
    expect(holds(expression)).toBe(expected);
  });

  it.each<[string, boolean]>([
    ["<api.data.active>", true],
    ["<api.data.none>", false],
    ["<api.data.items>", true],
    ["0", false],
    ['""', false],
    ['"false"', true],
    ["<classify.content>", true],
  ])("a lone value decides by its truth: %s is %s", (expression, expected) => {
    expect(holds(expression)).toBe(expected);
  });

  it("&& and || do not evaluate their right side when the left decides", () => {
    expect(holds("false && <nosuch.value> == 1")).toBe(false);
    expect(holds("true || <nosuch.value> == 1")).toBe(true);
  });

  it("a reference's value is a value, never part of the expression's source", () => {
    expect(holds('<injected.content> == "x"')).toBe(false);
    expect(holds("<injected.content>")).toBe(true);
  });
});

describe("condition expressions: failures", () => {
  it("a missing reference fails with the reference named (D14)", () => {
    expect(() => holds("<nosuch.status> == 200")).toThrow(ReferenceResolutionError);
    expect(() => holds("<api.body> == 1")).toThrow("reference <api.body> cannot be resolved");
    expect(() => holds("{{NOPE}} == 1")).toThrow("environment variable NOPE is not set");
  });

  it.each([
    ['"abc" < 1', "cannot apply < to string and number"],
    ["<api.data> > 1", "cannot apply > to object and number"],
    ["null >= 0", "cannot apply >= to null and number"],
    ["<api.status> contains 2", "cannot apply contains to number and number"],
    ['<api.data.tags> startsWith "n"', "cannot apply startsWith to array and string"],
    ['-"a"', "cannot negate string"],
  ])("%s cannot be evaluated: %s", (expression, message) => {
    expect(() => holds(expression)).toThrow(new ConditionEvaluationError(message));
  });
});

describe("condition expressions refuse anything that looks like code (D13: no eval)", () => {
  it.each([
    ["alert(1)", 'function calls are not allowed ("alert(") at column 1'],
    ['<api.data.name> == String("x")', 'function calls are not allowed ("String(") at column 20'],
    ["(<api.status>)(1)", "function calls are not allowed at column 15"],
    [
      "constructor",
      'unknown name "constructor": values are literals and <block.path> references at column 1',
    ],
    [
      "process.exit(1)",
      "property access is not allowed: write the path inside the reference, as in <block.path> at column 8",
    ],
    ["globalThis", 'unknown name "globalThis": values are literals and <block.path> references at column 1'],
    ["this == 1", 'unknown name "this": values are literals and <block.path> references at column 1'],
    [
      '<api.data>.constructor == "x"',
      "property access is not allowed: write the path inside the reference, as in <block.path> at column 11",
    ],
    [
      '<api.data>["constructor"]',
      "indexing is not allowed: write the index inside the reference, as in <block.items[0]> at column 11",
    ],
    ["<api.status> = 200", "assignment is not allowed: write == to compare at column 14"],
    ["<api.status> === 200", "=== is not needed: write == at column 14"],
    ["1 !== 2", "!== is not needed: write != at column 3"],
    ["true & false", "write && for and at column 6"],
    ["true | false", "write || for or at column 6"],
    ["1 + 1 == 2", 'unexpected character "+" at column 3'],
    ["`x`", 'unexpected character "`" at column 1'],
    ["x => 1", "assignment is not allowed: write == to compare at column 3"],
    ["1; 2", 'unexpected character ";" at column 2'],
    ["{a: 1}", 'unexpected character "{" at column 1'],
    [
      "[1, 2] contains 1",
      "indexing is not allowed: write the index inside the reference, as in <block.items[0]> at column 1",
    ],
  ])("%s is refused: %s", (expression, message) => {
    expect(parseCondition(expression)).toEqual({ ok: false, message });
    expect(() => holds(expression)).toThrow(ConditionSyntaxError);
  });
});

describe("condition expressions: syntax errors name the column", () => {
  it.each([
    ["", "expected a value at column 1"],
    ["<api.status> ==", "expected a value at column 16"],
    ["(1 == 1", 'missing ")" for this "(" at column 1'],
    ["1 == 1)", 'unexpected ")" at column 7'],
    ["1 < 2 < 3", "comparisons do not chain: join them with && at column 7"],
    ['"open', "string is not closed at column 1"],
    ['"a\\q"', "unknown escape in string at column 3"],
    ["1 2", "unexpected 2 at column 3"],
    ["&& true", 'expected a value, found "&&" at column 1'],
    ["<api..status> == 1", "not a reference: write <block.path> with .key or [index] steps at column 1"],
    ["1 <true", "not a reference: write <block.path> with .key or [index] steps at column 3"],
    [`${"(".repeat(100)}1${")".repeat(100)}`, "expression is nested too deeply at column 1"],
    ["1 == 1 && ".repeat(2000).concat("true"), "expression is longer than 10000 characters at column 10001"],
  ])("%j: %s", (expression, message) => {
    expect(parseCondition(expression)).toEqual({ ok: false, message });
  });

  it.each([
    "<api.status> == 200",
    '<classify.content> == "urgent" || <score.content> >= 70',
    "!(<api.data.active>) && {{MODE}} != 'dev'",
    "'it\\'s' == \"it's\"",
  ])("%s parses", (expression) => {
    expect(parseCondition(expression)).toEqual({ ok: true });
  });
});

describe("the condition block's config: branches by sourceHandle", () => {
  const config = {
    conditions: [
      { id: "server-error", expression: "<api.status> >= 500" },
      { id: "ok", expression: "<api.status> == 200" },
      { id: "else" },
    ],
  };

  it("takes the first branch whose expression holds", () => {
    expect(selectConditionBranch(conditionConfigOf(config), scope)).toBe("ok");
  });

  it("takes the branch without an expression when none before it holds", () => {
    const down: ReferenceScope = { ...scope, outputs: { api: { status: 404 } } };
    expect(selectConditionBranch(conditionConfigOf(config), down)).toBe("else");
  });

  it("takes no branch when none holds and there is no default", () => {
    const noDefault = conditionConfigOf({ conditions: [{ id: "ok", expression: "<api.status> == 201" }] });
    expect(selectConditionBranch(noDefault, scope)).toBeUndefined();
  });

  it("is checked on save with a message per problem", () => {
    expect(checkConditionConfig(config)).toEqual([]);
    expect(checkConditionConfig({ if: "<api.status> == 200" })).toEqual([
      "conditions must be a non-empty list of {id, expression}",
    ]);
    expect(
      checkConditionConfig({
        conditions: [
          { id: "a" },
          { id: "a", expression: "1 =" },
          { id: "", expression: 3 },
          { expression: "true" },
        ],
      }),
    ).toEqual([
      "conditions[0] has no expression, so it must be the last branch",
      'conditions[1].id "a" is used twice',
      "conditions[1].expression: assignment is not allowed: write == to compare at column 3",
      "conditions[2].id must be a non-empty string",
      "conditions[2].expression must be a string",
      "conditions[3].id must be a non-empty string",
    ]);
  });

  it("refuses to run a config of the wrong shape", () => {
    expect(() => conditionConfigOf({ conditions: [] })).toThrow(ConditionConfigError);
  });
});
