import { type ReferenceScope, referenceAt, resolveReferences, typeName } from "./references.js";

/**
 * The condition block's expression language (D13: branches on a safe expression language, no `eval`).
 * Pure code without Node imports, so the deterministic workflow can choose a branch in the Temporal
 * sandbox. Hand-written rather than built on a parser library such as jsep: there `<` is only an operator,
 * so our `<block.path>` references would have to be rewritten in the source text before parsing.
 *
 *   expression := or
 *   or         := and ("||" and)*
 *   and        := comparison ("&&" comparison)*
 *   comparison := unary (("==" | "!=" | "<" | "<=" | ">" | ">=" | "contains" | "startsWith" | "endsWith") unary)?
 *   unary      := ("!" | "-") unary | primary
 *   primary    := number | string | true | false | null | <block.path> | {{NAME}} | "(" expression ")"
 *
 * Values are literals and references only: there are no names, calls, property access or assignment, so
 * nothing in an expression can reach code. References are resolved as typed values by references.ts and
 * never spliced into the source text, so an output holding `" || true` is just a string. Hence the engine
 * must hand a condition's expressions to this module unresolved.
 *
 * Semantics: `==` and `!=` compare JSON values structurally; `<`, `<=`, `>`, `>=` compare two numbers or
 * two strings. Block outputs are often text (an agent's content), so a number meets a string that reads as
 * a number as two numbers on every comparison. `&&`, `||` and `!` take false, null, 0 and "" as false and
 * anything else as true; the expression's outcome is read the same way. `a contains b` is a substring test
 * on strings and a member test (by `==`) on arrays.
 */

/**
 * A condition block's config, the one place its shape is defined. Branches are tried in order and the
 * first whose expression holds is taken; its `id` is the `sourceHandle` of the edges to follow. A branch
 * without an expression (conventionally `else`) is taken when none before it holds, so it comes last.
 * When no branch holds and there is no such default, no edge is followed.
 */
export interface ConditionConfig {
  conditions: ConditionBranch[];
}

export interface ConditionBranch {
  id: string;
  expression?: string;
}

/** An expression that does not parse; `column` is 1-based. */
export class ConditionSyntaxError extends Error {
  constructor(
    problem: string,
    readonly column: number,
  ) {
    super(`${problem} at column ${column}`);
    this.name = "ConditionSyntaxError";
  }
}

/** An expression that parses but cannot be evaluated on the values it met, such as `"a" < 1`. */
export class ConditionEvaluationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConditionEvaluationError";
  }
}

/** A condition config that does not have the shape of ConditionConfig. */
export class ConditionConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid condition config: ${problems.join("; ")}`);
    this.name = "ConditionConfigError";
  }
}

export function parseCondition(expression: string): { ok: true } | { ok: false; message: string } {
  try {
    parse(expression);
    return { ok: true };
  } catch (error) {
    if (error instanceof ConditionSyntaxError) return { ok: false, message: error.message };
    throw error;
  }
}

/**
 * Throws ConditionSyntaxError, ConditionEvaluationError, or ReferenceResolutionError for a reference
 * that does not resolve (D14: it fails the block with a message naming the reference).
 */
export function evaluateCondition(expression: string, scope: ReferenceScope): boolean {
  return truthy(evaluate(parse(expression), scope));
}

/** Problems with a condition block's config, for validation on save; empty when it is sound. */
export function checkConditionConfig(config: unknown): string[] {
  const conditions = isRecord(config) ? config.conditions : undefined;
  if (!Array.isArray(conditions) || conditions.length === 0) {
    return ["conditions must be a non-empty list of {id, expression}"];
  }
  const problems: string[] = [];
  const seen = new Set<string>();
  conditions.forEach((branch: unknown, i) => {
    const where = `conditions[${i}]`;
    const id = isRecord(branch) ? branch.id : undefined;
    const expression = isRecord(branch) ? branch.expression : undefined;
    if (typeof id !== "string" || id === "") problems.push(`${where}.id must be a non-empty string`);
    else if (seen.has(id)) problems.push(`${where}.id "${id}" is used twice`);
    else seen.add(id);
    if (expression === undefined) {
      if (i !== conditions.length - 1)
        problems.push(`${where} has no expression, so it must be the last branch`);
    } else if (typeof expression !== "string") {
      problems.push(`${where}.expression must be a string`);
    } else {
      const parsed = parseCondition(expression);
      if (!parsed.ok) problems.push(`${where}.expression: ${parsed.message}`);
    }
  });
  return problems;
}

/** A config read from a block (a protobuf Struct), checked; throws ConditionConfigError otherwise. */
export function conditionConfigOf(config: unknown): ConditionConfig {
  const problems = checkConditionConfig(config);
  if (problems.length > 0) throw new ConditionConfigError(problems);
  return config as ConditionConfig;
}

/** The id of the branch to take, or undefined when none holds (see ConditionConfig). */
export function selectConditionBranch(config: ConditionConfig, scope: ReferenceScope): string | undefined {
  return config.conditions.find(
    (branch) => branch.expression === undefined || evaluateCondition(branch.expression, scope),
  )?.id;
}

type Literal = string | number | boolean | null;
type ComparisonOperator = "==" | "!=" | "<" | "<=" | ">" | ">=" | "contains" | "startsWith" | "endsWith";

type Node =
  | { kind: "literal"; value: Literal }
  | { kind: "reference"; text: string }
  | { kind: "unary"; operator: "!" | "-"; operand: Node }
  | { kind: "logical"; operator: "&&" | "||"; left: Node; right: Node }
  | { kind: "comparison"; operator: ComparisonOperator; left: Node; right: Node };

type Token =
  | { kind: "literal"; value: Literal; at: number }
  | { kind: "reference"; text: string; at: number }
  | { kind: "operator"; text: string; at: number }
  | { kind: "name"; text: string; at: number }
  | { kind: "end"; at: number };

const comparisonOperators = new Set<string>([
  "==",
  "!=",
  "<",
  "<=",
  ">",
  ">=",
  "contains",
  "startsWith",
  "endsWith",
]);
const keywords: Readonly<Record<string, Literal>> = { true: true, false: false, null: null };
const operators = ["==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "-", "(", ")"];
/** Characters that start JavaScript rather than a condition, each with the way to say it here. */
const refusedOperators: Readonly<Record<string, string>> = {
  "===": "=== is not needed: write ==",
  "!==": "!== is not needed: write !=",
  "=": "assignment is not allowed: write == to compare",
  ".": "property access is not allowed: write the path inside the reference, as in <block.path>",
  "[": "indexing is not allowed: write the index inside the reference, as in <block.items[0]>",
  "&": "write && for and",
  "|": "write || for or",
};
/** Deep and long enough for any hand-written condition, small enough never to exhaust the stack. */
const maxDepth = 64;
const maxLength = 10_000;

const numberLiteral = /\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const nameToken = /[A-Za-z_$][\w$]*/y;
const stringEscapes: Readonly<Record<string, string>> = {
  '"': '"',
  "'": "'",
  "\\": "\\",
  n: "\n",
  t: "\t",
};

function parse(expression: string): Node {
  if (expression.length > maxLength) {
    throw new ConditionSyntaxError(`expression is longer than ${maxLength} characters`, maxLength + 1);
  }
  return new Parser(tokenize(expression)).expression();
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < source.length) {
    if (/\s/.test(source[at] ?? "")) {
      at++;
      continue;
    }
    const token = readToken(source, at);
    tokens.push(token.token);
    at = token.end;
  }
  tokens.push({ kind: "end", at });
  return tokens;
}

/**
 * A reference is tried before `<` as an operator, and `<` directly followed by a letter is never the
 * operator: no value can start with a letter, so that text can only be a reference gone wrong.
 */
function readToken(source: string, at: number): { token: Token; end: number } {
  const reference = referenceAt(source, at);
  if (reference !== undefined)
    return { token: { kind: "reference", text: reference, at }, end: at + reference.length };
  const char = source[at] ?? "";
  if (char === "<" && /[A-Za-z_]/.test(source[at + 1] ?? "")) {
    throw new ConditionSyntaxError("not a reference: write <block.path> with .key or [index] steps", at + 1);
  }
  if (char === '"' || char === "'") return readString(source, at);
  const number = matchAt(numberLiteral, source, at);
  if (number !== undefined)
    return { token: { kind: "literal", value: Number(number), at }, end: at + number.length };
  const name = matchAt(nameToken, source, at);
  if (name !== undefined) return { token: { kind: "name", text: name, at }, end: at + name.length };
  const refused = Object.keys(refusedOperators).find((text) => source.startsWith(text, at));
  const operator = operators.find((text) => source.startsWith(text, at));
  if (refused !== undefined && (operator === undefined || refused.length > operator.length)) {
    throw new ConditionSyntaxError(refusedOperators[refused] ?? refused, at + 1);
  }
  if (operator !== undefined)
    return { token: { kind: "operator", text: operator, at }, end: at + operator.length };
  throw new ConditionSyntaxError(`unexpected character ${JSON.stringify(char)}`, at + 1);
}

function readString(source: string, start: number): { token: Token; end: number } {
  const quote = source[start];
  let value = "";
  for (let at = start + 1; at < source.length; at++) {
    const char = source[at] as string;
    if (char === quote) return { token: { kind: "literal", value, at: start }, end: at + 1 };
    if (char !== "\\") {
      value += char;
      continue;
    }
    const escaped = stringEscapes[source[at + 1] ?? ""];
    if (escaped === undefined) throw new ConditionSyntaxError("unknown escape in string", at + 1);
    value += escaped;
    at++;
  }
  throw new ConditionSyntaxError("string is not closed", start + 1);
}

function matchAt(pattern: RegExp, source: string, at: number): string | undefined {
  pattern.lastIndex = at;
  return pattern.exec(source)?.[0];
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  expression(): Node {
    const node = this.or();
    const next = this.peek();
    if (next.kind !== "end") {
      const call = next.kind === "operator" && next.text === "(";
      throw new ConditionSyntaxError(
        call ? "function calls are not allowed" : `unexpected ${describe(next)}`,
        next.at + 1,
      );
    }
    return node;
  }

  private or(): Node {
    let left = this.and();
    while (this.takeOperator("||")) left = { kind: "logical", operator: "||", left, right: this.and() };
    return left;
  }

  private and(): Node {
    let left = this.comparison();
    while (this.takeOperator("&&"))
      left = { kind: "logical", operator: "&&", left, right: this.comparison() };
    return left;
  }

  private comparison(): Node {
    const left = this.unary();
    const operator = this.comparisonOperator();
    if (operator === undefined) return left;
    const node: Node = { kind: "comparison", operator, left, right: this.unary() };
    const chained = this.peek();
    if (this.comparisonOperator() !== undefined) {
      throw new ConditionSyntaxError("comparisons do not chain: join them with &&", chained.at + 1);
    }
    return node;
  }

  private unary(): Node {
    const token = this.peek();
    if (token.kind === "operator" && (token.text === "!" || token.text === "-")) {
      this.index++;
      return { kind: "unary", operator: token.text, operand: this.nested(() => this.unary()) };
    }
    return this.primary();
  }

  private primary(): Node {
    const token = this.tokens[this.index++] ?? { kind: "end", at: 0 };
    switch (token.kind) {
      case "literal":
        return { kind: "literal", value: token.value };
      case "reference":
        return { kind: "reference", text: token.text };
      case "name":
        return this.keyword(token);
      case "operator":
        if (token.text === "(") return this.group(token.at);
        break;
      case "end":
        throw new ConditionSyntaxError("expected a value", token.at + 1);
    }
    throw new ConditionSyntaxError(`expected a value, found ${describe(token)}`, token.at + 1);
  }

  private keyword(token: { text: string; at: number }): Node {
    if (Object.hasOwn(keywords, token.text)) return { kind: "literal", value: keywords[token.text] ?? null };
    const next = this.peek();
    const problem =
      next.kind === "operator" && next.text === "("
        ? `function calls are not allowed ("${token.text}(")`
        : `unknown name "${token.text}": values are literals and <block.path> references`;
    throw new ConditionSyntaxError(problem, token.at + 1);
  }

  private group(at: number): Node {
    const inner = this.nested(() => this.or());
    if (!this.takeOperator(")")) throw new ConditionSyntaxError('missing ")" for this "("', at + 1);
    return inner;
  }

  private nested(parse: () => Node): Node {
    if (++this.depth > maxDepth) throw new ConditionSyntaxError("expression is nested too deeply", 1);
    const node = parse();
    this.depth--;
    return node;
  }

  private comparisonOperator(): ComparisonOperator | undefined {
    const token = this.peek();
    if ((token.kind === "operator" || token.kind === "name") && comparisonOperators.has(token.text)) {
      this.index++;
      return token.text as ComparisonOperator;
    }
    return undefined;
  }

  private takeOperator(text: string): boolean {
    const token = this.peek();
    if (token.kind !== "operator" || token.text !== text) return false;
    this.index++;
    return true;
  }

  private peek(): Token {
    return this.tokens[this.index] ?? { kind: "end", at: 0 };
  }
}

function describe(token: Token): string {
  switch (token.kind) {
    case "end":
      return "end of expression";
    case "literal":
      return JSON.stringify(token.value);
    default:
      return `"${token.text}"`;
  }
}

function evaluate(node: Node, scope: ReferenceScope): unknown {
  switch (node.kind) {
    case "literal":
      return node.value;
    case "reference":
      return resolveReferences(node.text, scope);
    case "unary":
      return node.operator === "!"
        ? !truthy(evaluate(node.operand, scope))
        : -number(evaluate(node.operand, scope));
    case "logical": {
      const left = truthy(evaluate(node.left, scope));
      if (node.operator === "&&" ? !left : left) return left;
      return truthy(evaluate(node.right, scope));
    }
    case "comparison":
      return compare(node.operator, evaluate(node.left, scope), evaluate(node.right, scope));
  }
}

function compare(operator: ComparisonOperator, leftValue: unknown, rightValue: unknown): boolean {
  const [left, right] = alignNumbers(leftValue, rightValue);
  switch (operator) {
    case "==":
      return sameValue(left, right);
    case "!=":
      return !sameValue(left, right);
    case "contains":
      return contains(left, right);
    case "startsWith":
    case "endsWith": {
      const [text, part] = strings(operator, left, right);
      return text[operator](part);
    }
    default:
      return ordered(operator, left, right);
  }
}

/** A number meets a numeric string as two numbers: block outputs such as an agent's content are text. */
function alignNumbers(left: unknown, right: unknown): [unknown, unknown] {
  if (typeof left === "number" && typeof right === "string") return [left, numericText(right) ?? right];
  if (typeof left === "string" && typeof right === "number") return [numericText(left) ?? left, right];
  return [left, right];
}

function numericText(text: string): number | undefined {
  const value = text.trim() === "" ? Number.NaN : Number(text);
  return Number.isFinite(value) ? value : undefined;
}

function ordered(operator: "<" | "<=" | ">" | ">=", left: unknown, right: unknown): boolean {
  const [a, b] =
    typeof left === "number" && typeof right === "number" ? [left, right] : strings(operator, left, right);
  switch (operator) {
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    case ">=":
      return a >= b;
  }
}

function contains(left: unknown, right: unknown): boolean {
  if (Array.isArray(left)) return left.some((item) => sameValue(item, right));
  const [text, part] = strings("contains", left, right);
  return text.includes(part);
}

function strings(operator: string, left: unknown, right: unknown): [string, string] {
  if (typeof left === "string" && typeof right === "string") return [left, right];
  throw mismatch(operator, left, right);
}

function mismatch(operator: string, left: unknown, right: unknown): ConditionEvaluationError {
  return new ConditionEvaluationError(`cannot apply ${operator} to ${typeName(left)} and ${typeName(right)}`);
}

function number(value: unknown): number {
  if (typeof value === "number") return value;
  throw new ConditionEvaluationError(`cannot negate ${typeName(value)}`);
}

function truthy(value: unknown): boolean {
  return !(value === false || value === null || value === 0 || value === "" || Number.isNaN(value));
}

/** Structural equality of JSON values. */
function sameValue(left: unknown, right: unknown): boolean {
  if (left === right) return true;
  if (Array.isArray(left) || Array.isArray(right)) {
    return (
      Array.isArray(left) &&
      Array.isArray(right) &&
      left.length === right.length &&
      left.every((item, i) => sameValue(item, right[i]))
    );
  }
  if (!isRecord(left) || !isRecord(right)) return false;
  const keys = Object.keys(left);
  return (
    keys.length === Object.keys(right).length &&
    keys.every((key) => Object.hasOwn(right, key) && sameValue(left[key], right[key]))
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
