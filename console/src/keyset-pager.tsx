import { navigate } from "./router.js";

/** The earlier pages' cursors, kept on the history entry so Back and Previous both work after a reload. */
interface Trail {
  cursors: string[];
}

/** What the three buttons say: the logs read either way, the delivery log and attempts newest first. */
export interface PagerLabels {
  first: string;
  previous: string;
  next: string;
}

/** The delivery log and a delivery's attempts are read newest first (D40). */
export const newestFirstLabels: PagerLabels = { first: "Newest", previous: "Newer", next: "Older" };

/**
 * Keyset pages (D8, D40) in the URL: the first page has no cursor, Next follows the answer's cursor and
 * Previous the trail of the cursors before it. `hrefAt` is the same view at a cursor.
 */
export function KeysetPager({
  label,
  labels = { first: "Newest", previous: "Previous", next: "Next" },
  cursor,
  nextCursor,
  hrefAt,
}: {
  label: string;
  labels?: PagerLabels;
  cursor: string | undefined;
  nextCursor: string | undefined;
  hrefAt: (cursor: string | undefined) => string;
}) {
  const trail = (history.state as Trail | null)?.cursors ?? [];
  const at = (to: string | undefined, cursors: string[]) =>
    navigate(hrefAt(to), { state: { cursors } satisfies Trail });
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={!cursor} onClick={() => at(undefined, [])}>
        {labels.first}
      </button>
      <button
        type="button"
        disabled={!cursor}
        onClick={() => at(trail.at(-1) || undefined, trail.slice(0, -1))}
      >
        {labels.previous}
      </button>
      <button type="button" disabled={!nextCursor} onClick={() => at(nextCursor, [...trail, cursor ?? ""])}>
        {labels.next}
      </button>
    </nav>
  );
}
