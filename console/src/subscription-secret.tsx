import { useRef, useState } from "preact/hooks";

/**
 * A webhook signing secret the API has just generated (on create, update or rotation). The API returns it
 * in that one answer only (D18, D24), so it lives in the page's memory until dismissed or left: never in
 * the URL, the history or the browser's storage.
 */
export function SecretOnce({ secret, onDismiss }: { secret: string; onDismiss: () => void }) {
  const field = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<string>();

  async function copy() {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied("Copied to the clipboard.");
    } catch {
      field.current?.select();
      setCopied("The browser did not allow copying: the secret is selected, press Ctrl+C (⌘C) to copy it.");
    }
  }

  return (
    <section class="secret-once" aria-labelledby="secret-once-title">
      <h2 id="secret-once-title">Signing secret</h2>
      <p>
        <strong>Copy it now: it will not be shown again.</strong> flowlog keeps it encrypted and never returns
        it; give it to the receiver to verify the <code>service-signature</code> header, or with Standard
        Webhooks the <code>webhook-signature</code> one.
      </p>
      <div class="secret-row">
        <label>
          Signing secret
          <input
            ref={field}
            readOnly
            value={secret}
            size={Math.min(secret.length + 2, 60)}
            onFocus={(event) => event.currentTarget.select()}
          />
        </label>
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" class="quiet" onClick={onDismiss}>
          I have saved it
        </button>
      </div>
      <p role="status">{copied}</p>
    </section>
  );
}
