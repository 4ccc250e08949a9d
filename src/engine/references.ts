/**
 * References in block configs (D14): `<blockname.path>` reads an earlier block's output, `{{NAME}}` a
 * workspace environment variable. Pure code without Node imports: the deterministic workflow resolves
 * references inside the Temporal sandbox (issue 4, item 2).
 *
 * How a literal `<` is told apart from a reference: only `<name.path>` with no whitespace counts, where
 * `name` is a letter or `_` followed by letters, digits, `_` or `-`, and the path is one or more `.key` or
 * `[index]` steps. So `a < b`, `<b>`, `<br/>`, `<a href="x.y">` and `<john.doe@example.com>` stay text.
 * A reference needs at least one step: `<start>` alone is text, not the whole output of a block.
 * `{{NAME}}` (spaces inside the braces allowed) is always meant as an environment variable.
 */

/** What references resolve against: outputs by normalized block name, and the workspace's variables. */
export interface ReferenceScope {
  outputs: Readonly<Record<string, unknown>>;
  /**
   * Absent: `{{NAME}}` stays as written. The workflow resolves block references this way, since values
   * of variables may only exist inside activities (D24: workflow history is shown in the Temporal UI).
   */
  env?: Readonly<Record<string, string>>;
}

/** A reference that names no earlier block, no value on its path, or no environment variable (D14). */
export class ReferenceResolutionError extends Error {
  constructor(
    /** The reference as written, e.g. `<api.data.id>` or `{{TOKEN}}`. */
    readonly reference: string,
    problem: string,
  ) {
    super(`reference ${reference} cannot be resolved: ${problem}`);
    this.name = "ReferenceResolutionError";
  }
}

const blockReference = /<([A-Za-z_][\w-]*)((?:\.[\w-]+|\[\d+\])+)>/;
const envReference = /\{\{\s*([A-Za-z_]\w*)\s*\}\}/;
const anyReference = new RegExp(`${blockReference.source}|${envReference.source}`, "g");
const wholeReference = new RegExp(`^(?:${blockReference.source}|${envReference.source})$`);
/** Text that starts like a block reference (`<name.` or `<name[`) up to a `>`, whitespace or the end. */
const referenceAttempt = /<[A-Za-z_][\w-]*[.[][\w.[\]-]*(?:>|(?=\s|$))/g;
/** Text from a `{{` to the nearest `}}`, or to the end when none follows. */
const envAttempt = /\{\{.*?(?:\}\}|$)/gs;

/** D14: block names match lowercased and without spaces, so "Fetch Ticket" is `<fetchticket.data>`. */
export function normalizeBlockName(name: string): string {
  return name.toLowerCase().replace(/\s+/g, "");
}

/**
 * Resolves every reference in the string values of `value`, deep through arrays and objects (keys are
 * left as written). A string that is exactly one reference becomes the referenced value with its own
 * type; references inside longer text are spliced in as text (strings as they are, anything else as
 * JSON). One pass over each string, so text that a reference brings in is never resolved again.
 */
export function resolveReferences(value: unknown, scope: ReferenceScope): unknown {
  return mapStrings(value, (text) => resolveString(text, scope));
}

/** The blocks (normalized names) and environment variables a value references, each once. */
export interface FoundReferences {
  blocks: string[];
  env: string[];
}

export function findReferences(value: unknown): FoundReferences {
  const blocks = new Set<string>();
  const env = new Set<string>();
  visitStrings(value, (text) => {
    if (!mayHoldReference(text)) return;
    for (const match of text.matchAll(anyReference)) {
      if (match[1] !== undefined) blocks.add(normalizeBlockName(match[1]));
      if (match[3] !== undefined) env.add(match[3]);
    }
  });
  return { blocks: [...blocks], env: [...env] };
}

/**
 * Problems with reference syntax in `value`, for validation on save: a `{{` that does not open a valid
 * `{{NAME}}`, and text that starts like a block reference but does not complete one (`<api.data`,
 * `<api..data>`, `<api.data[x]>`). Each message starts with the path inside `value` when there is one.
 */
export function checkReferenceSyntax(value: unknown): string[] {
  const problems: string[] = [];
  visitStrings(value, (text, path) => {
    for (const problem of [...envSyntaxProblems(text), ...blockSyntaxProblems(text)]) {
      problems.push(path === "" ? problem : `${path}: ${problem}`);
    }
  });
  return problems;
}

/**
 * The reference (either form) that starts exactly at `index` of `text`, as written, or undefined. The
 * condition language reads its references with this, so both agree on what a reference is.
 */
export function referenceAt(text: string, index: number): string | undefined {
  const sticky = new RegExp(anyReference.source, "y");
  sticky.lastIndex = index;
  return sticky.exec(text)?.[0];
}

/** Both forms start with `<` or `{{`; most strings of a config hold neither, and skip the regexes. */
function mayHoldReference(text: string): boolean {
  return text.includes("<") || text.includes("{{");
}

function resolveString(text: string, scope: ReferenceScope): unknown {
  if (!mayHoldReference(text)) return text;
  const whole = wholeReference.exec(text);
  if (whole) return resolveMatch(whole[0], whole[1], whole[2], whole[3], scope);
  return text.replace(anyReference, (reference: string, name?: string, path?: string, envName?: string) => {
    const found = resolveMatch(reference, name, path, envName, scope);
    return typeof found === "string" ? found : JSON.stringify(found);
  });
}

/** One match of `anyReference`: either `name` and `path` of a block reference, or `envName`. */
function resolveMatch(
  reference: string,
  name: string | undefined,
  path: string | undefined,
  envName: string | undefined,
  scope: ReferenceScope,
): unknown {
  if (envName !== undefined)
    return scope.env === undefined ? reference : readEnv(reference, envName, scope.env);
  return readOutput(reference, normalizeBlockName(name ?? ""), path ?? "", scope.outputs);
}

function readEnv(reference: string, name: string, env: Readonly<Record<string, string>>): string {
  const value = Object.hasOwn(env, name) ? env[name] : undefined;
  if (value === undefined)
    throw new ReferenceResolutionError(reference, `environment variable ${name} is not set`);
  return value;
}

/**
 * Walks own properties only, so a path such as `.constructor` or `.__proto__` never reaches a prototype.
 * Messages name the step and the type found, never a value (an output may carry a secret, D24).
 */
function readOutput(
  reference: string,
  name: string,
  path: string,
  outputs: ReferenceScope["outputs"],
): unknown {
  if (!Object.hasOwn(outputs, name)) {
    throw new ReferenceResolutionError(reference, `no block named "${name}" has run before this one`);
  }
  let current: unknown = outputs[name];
  for (let at = 0; at < path.length; ) {
    const end = stepEnd(path, at);
    const next = stepInto(current, path[at] === "[" ? path.slice(at + 1, end - 1) : path.slice(at + 1, end));
    if (next === undefined) {
      const walked = name + path.slice(0, at);
      throw new ReferenceResolutionError(
        reference,
        `${walked} (${typeName(current)}) has no ${path.slice(at, end)}`,
      );
    }
    current = next;
    at = end;
  }
  return current;
}

/**
 * Where the step of a matched path that starts at `at` ends: after its `]`, or where the next `.` or `[`
 * starts. The path matched the reference pattern, so this is all it takes to split it, without a regex
 * for every reference resolved.
 */
function stepEnd(path: string, at: number): number {
  if (path[at] === "[") return path.indexOf("]", at) + 1;
  let end = at + 1;
  while (end < path.length && path[end] !== "." && path[end] !== "[") end++;
  return end;
}

function stepInto(value: unknown, key: string): unknown {
  if (Array.isArray(value)) return /^\d+$/.test(key) ? value[Number(key)] : undefined;
  if (value !== null && typeof value === "object" && Object.hasOwn(value, key)) {
    return (value as Record<string, unknown>)[key];
  }
  return undefined;
}

/** The JSON type of a value, for messages that must not show the value itself. */
export function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function envSyntaxProblems(text: string): string[] {
  const problems: string[] = [];
  for (const [attempt] of text.matchAll(envAttempt)) {
    if (wholeReference.test(attempt)) continue;
    problems.push(
      attempt.endsWith("}}")
        ? `"${excerpt(attempt)}" is not an environment variable: write {{NAME}} with letters, digits and _`
        : `"${excerpt(attempt)}" is not closed with }}`,
    );
  }
  return problems;
}

function blockSyntaxProblems(text: string): string[] {
  const problems: string[] = [];
  for (const [attempt] of text.matchAll(referenceAttempt)) {
    if (wholeReference.test(attempt)) continue;
    problems.push(
      attempt.endsWith(">")
        ? `"${excerpt(attempt)}" is not a valid reference: write <block.path> with .key or [index] steps`
        : `"${excerpt(attempt)}" is not closed with >`,
    );
  }
  return problems;
}

function excerpt(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** Rebuilds `value` with every string passed through `onString`. */
function mapStrings(value: unknown, onString: (text: string) => unknown): unknown {
  if (typeof value === "string") return onString(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, onString));
  if (value !== null && typeof value === "object") {
    const mapped: Record<string, unknown> = {};
    for (const key in value) {
      if (Object.hasOwn(value, key)) {
        defineOwn(mapped, key, mapStrings((value as Record<string, unknown>)[key], onString));
      }
    }
    return mapped;
  }
  return value;
}

/**
 * Passes every string of `value` to `visit` with where it sits (`a.b[0]`), for validation messages;
 * resolving, the hot path of every block run, maps strings without building paths.
 */
function visitStrings(value: unknown, visit: (text: string, path: string) => void, path = ""): void {
  if (typeof value === "string") visit(value, path);
  else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) visitStrings(item, visit, `${path}[${i}]`);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      visitStrings(item, visit, path === "" ? key : `${path}.${key}`);
    }
  }
}

/**
 * Sets a key that came from data (a block name, an output's key): `__proto__` is just a name, defined and
 * never assigned through the prototype setter, the one inherited setter of a plain object. Other keys
 * are assigned, which is the same and much faster.
 */
export function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
