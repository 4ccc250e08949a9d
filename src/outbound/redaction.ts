/**
 * Secrets (D24) masked in everything flowlog keeps or shows: block outputs and errors, trace spans, the
 * delivery log. A server that echoes a secret seldom echoes a plain copy: it comes back URL-encoded from a
 * query, base64 inside a `Basic` header or a token, escaped inside a JSON string. Each of those forms is
 * masked as well, by this one redactor that every caller uses.
 */

export const redactedMark = "[redacted]";

/** Shorter values would mangle ordinary text wherever they happen to occur; they protect nothing anyway. */
const minRedactedLength = 4;

export interface Redactor {
  text(text: string): string;
  /** Every string in `value`, keys included, deep through arrays and objects. */
  value<T>(value: T): T;
}

export function createRedactor(secrets: Iterable<string | undefined>): Redactor {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret === undefined || secret.length < minRedactedLength) continue;
    for (const form of formsOf(secret)) if (form.length >= minRedactedLength) forms.add(form);
  }
  // Longest first, so that where two forms overlap the whole of the longer one is masked.
  const pattern =
    forms.size === 0
      ? undefined
      : new RegExp(
          [...forms]
            .sort((a, b) => b.length - a.length)
            .map(escapeRegExp)
            .join("|"),
          "g",
        );
  const text = (value: string) => (pattern ? value.replace(pattern, redactedMark) : value);
  const deep = (value: unknown): unknown => {
    if (typeof value === "string") return text(value);
    if (Array.isArray(value)) return value.map(deep);
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [text(key), deep(item)]));
    }
    return value;
  };
  return { text, value: <T>(value: T) => (pattern ? (deep(value) as T) : value) };
}

function formsOf(secret: string): string[] {
  return [secret, ...urlEncodedForms(secret), ...jsonEscapedForms(secret), ...base64Forms(secret)];
}

/** encodeURIComponent and form encoding (space as +), with upper- and lower-case hex escapes. */
function urlEncodedForms(secret: string): string[] {
  const forms = [encodeURIComponent(secret), new URLSearchParams([["", secret]]).toString().slice(1)];
  return forms.flatMap((form) => [form, form.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())]);
}

/**
 * As it appears between the quotes of a JSON string: JavaScript's escaping, and the ASCII-only and
 * slash-escaping variants other serializers (Python, PHP) write.
 */
function jsonEscapedForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const ascii = json.replace(
    /[\u0080-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return [json, ascii].flatMap((form) => [form, form.replaceAll("/", "\\/")]);
}

/**
 * Base64 and base64url of the secret wherever it sits in the encoded bytes (after `user:` in a Basic
 * header, inside a token): base64 maps 3 bytes to 4 characters, so the secret is encoded one of three ways
 * depending on its offset. For each, the characters that depend on the secret's bytes alone are masked;
 * the one or two at either edge that mix in neighbouring bytes stay.
 */
function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  return [0, 1, 2].flatMap((offset) => {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    const core = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
    return [core, core.replaceAll("+", "-").replaceAll("/", "_")];
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
