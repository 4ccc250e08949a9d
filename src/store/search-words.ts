/**
 * D45's words: what an entry is found by, and the one rule that splits text into words, for the index
 * and for the query alike, on both stores. Splitting here rather than in FTS5's tokenizer or PostgreSQL's
 * parser keeps the stores equal: PostgreSQL's parser keeps `a@b.com`, `1.2.3` or `/usr/bin` whole where
 * FTS5 splits them, and lowercases by the server's locale; these words reach both already split and
 * lowercased, and each store only indexes them as they are.
 */

/** A word is a run of letters, digits and combining marks; everything else separates words. */
const wordPattern = /[\p{L}\p{N}\p{M}]+/gu;

/** Longer words are not indexed (PostgreSQL refuses lexemes of 2 KiB; none is a word anyone types). */
export const maxWordChars = 100;

/** The text of one entry that is indexed, at most (D45): its first 64 Ki characters, the rest unsearchable. */
export const maxIndexedChars = 65_536;

/** Text as its words: NFKC-normalised, lowercased, split, each at most maxWordChars; repeats kept. */
export function wordsOf(text: string): string[] {
  // ASCII text, most of what entries hold, needs no normalising, and its letters and digits are a-z, 0-9:
  // the same words at a fraction of the cost, on the write path (D45).
  const words = nonAscii.test(text)
    ? text.normalize("NFKC").toLowerCase().match(wordPattern)
    : text.toLowerCase().match(asciiWordPattern);
  return (words ?? []).filter((word) => word.length <= maxWordChars);
}

const nonAscii = /[\u0080-\uffff]/;
const asciiWordPattern = /[a-z0-9]+/g;

/** A query word: matched whole, or as the start of a word (`timeout*`). */
export interface SearchTerm {
  word: string;
  prefix: boolean;
}

/**
 * The texts of an entry that are indexed, most telling first, so the bound cuts the final output's
 * tail: its block names and errors (trace spans and their children), then the string values of its
 * final output, where a failed execution's error also stands ({error}). The workflow's name is added by
 * the store, which knows it. Read lazily: indexedWords stops at its bound.
 */
export function* entryTexts(traceSpans: unknown[], finalOutput: unknown): Generator<string> {
  const spanOf = (value: unknown) =>
    typeof value === "object" && value !== null
      ? (value as { name?: unknown; error?: unknown; children?: unknown })
      : {};
  for (const span of depthFirst(traceSpans, (span) => spanOf(span).children)) {
    const { name, error } = spanOf(span);
    if (typeof name === "string") yield name;
    if (typeof error === "string") yield error;
  }
  const jsonInner = (value: unknown) =>
    typeof value === "object" && value !== null ? Object.values(value) : undefined;
  for (const value of depthFirst([finalOutput], jsonInner)) if (typeof value === "string") yield value;
}

/** Every node of a tree in document order, without recursion (a final output may nest deeply). */
function* depthFirst(roots: unknown[], inner: (node: unknown) => unknown): Generator<unknown> {
  const stack: unknown[] = [...roots].reverse();
  while (stack.length > 0) {
    const node = stack.pop();
    yield node;
    const below = inner(node);
    if (Array.isArray(below)) for (let i = below.length - 1; i >= 0; i--) stack.push(below[i]);
  }
}

/**
 * The distinct words of texts, read in order until maxIndexedChars characters have been read: what
 * one entry is indexed under.
 */
export function indexedWords(texts: Iterable<string>): string[] {
  const words = new Set<string>();
  let budget = maxIndexedChars;
  for (const text of texts) {
    if (budget <= 0) break;
    for (const word of wordsOf(text.length > budget ? text.slice(0, budget) : text)) words.add(word);
    budget -= text.length;
  }
  return [...words];
}

/**
 * What an entry is indexed under (D45): the words of its workflow's name (as the workflow was named when
 * the entry was written), and its content's words (indexedWords of entryTexts).
 */
export function entryWords(workflowName: string | null | undefined, contentWords: string[]): string[] {
  return [...new Set([...wordsOf(workflowName ?? ""), ...contentWords])];
}

/** entryWords of an entry as its row keeps it: what the migrations index existing entries with. */
export function storedEntryWords(
  workflowName: string | null,
  traceSpansJson: string,
  finalOutputJson: string | null,
): string[] {
  const content = entryTexts(
    JSON.parse(traceSpansJson),
    finalOutputJson === null ? null : JSON.parse(finalOutputJson),
  );
  return entryWords(workflowName, indexedWords(content));
}

/**
 * A query's terms (D45): its words, each required; a word directly followed by `*` is a prefix.
 * Everything but letters, digits, marks and that `*` only separates words, so quotes, `-`, `:`, `&`, `|`,
 * `!`, parentheses or NEAR reach neither store's query syntax as anything but the text around them.
 * Undefined when a word is too long to be indexed (it could never match), [] when there is no word.
 */
export function searchTermsOf(q: string): SearchTerm[] | undefined {
  const terms = new Map<string, SearchTerm>();
  for (const [, run, stars] of q
    .normalize("NFKC")
    .toLowerCase()
    .matchAll(/([\p{L}\p{N}\p{M}]+)(\*?)/gu)) {
    const word = run as string;
    if (word.length > maxWordChars) return undefined;
    const prefix = stars === "*";
    terms.set(`${word}${prefix ? "*" : ""}`, { word, prefix });
  }
  return [...terms.values()];
}
