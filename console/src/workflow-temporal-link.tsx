/**
 * The execution's page in the Temporal Web UI. The console knows no address but its own origin, so the
 * server writes a template into the document (src/server/console-assets.ts: the UI's address, the
 * namespace and the execution's Temporal workflow id, with `{executionId}` to fill in); empty when
 * FLOWLOG_TEMPORAL_UI_URL is unset, and then there is no link.
 */
function temporalExecutionUrl(executionId: string): string | undefined {
  const template = document
    .querySelector<HTMLMetaElement>('meta[name="flowlog-temporal-execution-url"]')
    ?.content.trim();
  return template ? template.replace("{executionId}", encodeURIComponent(executionId)) : undefined;
}

/** Whether the server told the page where the Temporal UI is. */
export function hasTemporalUi(): boolean {
  return temporalExecutionUrl("") !== undefined;
}

export function TemporalLink({ executionId }: { executionId: string }) {
  const href = temporalExecutionUrl(executionId);
  if (!href) return null;
  return (
    <a href={href} target="_blank" rel="noreferrer">
      Open in the Temporal UI<span class="visually-hidden"> (opens in a new tab)</span>
    </a>
  );
}
