import { formatJson } from "./format.js";

/**
 * JSON for people, in a box that scrolls past its height: focusable, so a keyboard can scroll it too
 * (WCAG 2.1.1). What it holds is said by the caption or label beside it.
 */
export function JsonText({ value, class: className }: { value: unknown; class?: string }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to be scrolled by keys.
    <pre class={className} tabIndex={0}>
      {formatJson(value)}
    </pre>
  );
}
