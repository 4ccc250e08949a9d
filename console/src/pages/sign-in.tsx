import { useState } from "preact/hooks";
import { createApi, errorMessage, isUnauthenticated } from "../api.js";

/**
 * The key and the workspace, checked with one cheap call (a one-entry list) before the console opens, so
 * a wrong key or a workspace the key cannot see is said here rather than on every page.
 */
export function SignIn({
  workspaceId,
  onSignedIn,
}: {
  workspaceId: string | undefined;
  onSignedIn: (apiKey: string, workspaceId: string) => void;
}) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const apiKey = String(form.get("apiKey") ?? "").trim();
    const workspace = String(form.get("workspaceId") ?? "").trim();
    setBusy(true);
    setError(undefined);
    try {
      await createApi(apiKey, () => {}).logs.listLogs({ workspaceId: workspace, limit: 1 });
      onSignedIn(apiKey, workspace);
    } catch (caught) {
      setError(
        isUnauthenticated(caught) ? "That API key is not valid, or it was revoked." : errorMessage(caught),
      );
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" class="sign-in">
      <h1>flowlog console</h1>
      <p>
        Sign in with an API key (<code>npm run flowlog -- bootstrap</code> prints one). The key stays in this
        tab only and is sent to nothing but this server.
      </p>
      <form onSubmit={submit}>
        <label for="apiKey">API key</label>
        <input id="apiKey" name="apiKey" type="password" autocomplete="off" required placeholder="flk_…" />
        <label for="workspaceId">Workspace id</label>
        <input id="workspaceId" name="workspaceId" required value={workspaceId} placeholder="ws_…" />
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? "Checking…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
