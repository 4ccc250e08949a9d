import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { alertRuleNames, alertRules } from "../src/domain/alert-rules.js";

interface DocumentedRule {
  firesWhen: string;
  /** D34: when a firing of the rule is over. */
  resolvesWhen: string;
  /** The unit of X, as docs/notifications.md's `threshold` column says it. */
  threshold: string;
  /** The unit of Y; empty for a rule without a window. */
  windowHours: string;
}

const readme = readFileSync(new URL("../docs/notifications.md", import.meta.url), "utf8");

/** The cells of the first Markdown table under docs/notifications.md's "Alert rules" heading. */
function alertRulesTable(): { header: string[]; rows: string[][] } {
  const lines = readme.slice(readme.indexOf("## Alert rules")).split("\n");
  const start = lines.findIndex((line) => line.startsWith("|"));
  const end = lines.findIndex((line, index) => index > start && !line.startsWith("|"));
  const [header = [], , ...rows] = lines.slice(start, end).map(cellsOf); // the second row is the --- line
  return { header, rows };
}

function cellsOf(row: string): string[] {
  return row
    .split("|")
    .slice(1, -1)
    .map((cell) => cell.trim());
}

describe("README: the alert-rules table (D21) says what src/domain/alert-rules.ts does", () => {
  const { header, rows } = alertRulesTable();
  const documented = rows.map(([rule, firesWhen, resolvesWhen, threshold, windowHours]) => [
    (rule ?? "").replaceAll("`", ""),
    { firesWhen, resolvesWhen, threshold, windowHours } as DocumentedRule,
  ]);

  it("has the columns rule, fires when, resolves when (D34), threshold unit and window unit, in that order", () => {
    expect(header).toEqual(["`rule`", "fires when", "resolves when (D34)", "`threshold`", "`windowHours`"]);
  });

  it("documents every rule exactly once, and no other", () => {
    expect(documented.map(([rule]) => rule).sort()).toEqual([...alertRuleNames].sort());
  });

  it("says for each rule when it fires, when it resolves and the units of X and Y, as its table entry does", () => {
    const expected = alertRuleNames.map((rule) => {
      const { firesWhen, resolvesWhen, threshold, windowHours } = alertRules[rule];
      const units = { threshold: threshold.unit, windowHours: windowHours?.unit ?? "" };
      return [rule, { firesWhen, resolvesWhen, ...units }];
    });
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(expected));
  });
});
