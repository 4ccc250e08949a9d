import { useState } from "preact/hooks";
import { errorMessage } from "./api.js";

/**
 * A button's call: busy while it runs, its refusal kept in the server's words (they name the field or the
 * state, D10) for the section to show.
 */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  async function run<T>(call: () => Promise<T>, then: (answer: T) => void): Promise<void> {
    setBusy(true);
    setError(undefined);
    try {
      then(await call());
    } catch (caught) {
      setError(errorMessage(caught));
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, run };
}
