/**
 * Which URLs flowlog sends requests to (block URLs and redirect targets D16, channel URLs D19/D20, agent
 * providers D13): absolute http(s), without credentials, which belong in a header where redaction and the
 * redirect rules see them (D24). Checked before sending, since fetch would reject the others with an error
 * that looks like a network failure. A problem never quotes the URL: it may carry a secret.
 */
export function outboundUrlProblem(url: URL): string | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an absolute http or https URL";
  if (url.username || url.password) return "must not carry credentials";
  return undefined;
}

/** `text` (relative to `base` when given) as an outbound URL, or the problem with it. */
export function parseOutboundUrl(text: string, base?: URL): URL | { problem: string } {
  const url = URL.canParse(text, base?.href) ? new URL(text, base) : undefined;
  const problem = url ? outboundUrlProblem(url) : "must be an absolute http or https URL";
  return url && !problem ? url : { problem: problem ?? "" };
}
