import { useEffect, useState } from "preact/hooks";
import { errorMessage } from "./api.js";

export type CallState<T> =
  | { status: "loading"; value?: T }
  | { status: "done"; value: T }
  | { status: "failed"; error: string; value?: T };

/**
 * Runs an API call when its inputs change and keeps the last answer while the next one loads, so a page
 * does not flash empty. A call overtaken by a newer one is aborted and its answer dropped.
 */
export function useCall<T>(
  call: (signal: AbortSignal) => Promise<T>,
  inputs: readonly unknown[],
): [CallState<T>, () => void] {
  const [state, setState] = useState<CallState<T>>({ status: "loading" });
  const [round, setRound] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setState((previous) => ({ status: "loading", value: previous.value }));
    call(controller.signal).then(
      (value) => controller.signal.aborted || setState({ status: "done", value }),
      (error: unknown) =>
        controller.signal.aborted ||
        setState((previous) => ({ status: "failed", error: errorMessage(error), value: previous.value })),
    );
    return () => controller.abort();
  }, [...inputs, round]);
  return [state, () => setRound((n) => n + 1)];
}

/** The failure of a call, said where the page would have shown its answer. */
export function CallError({ state }: { state: CallState<unknown> }) {
  if (state.status !== "failed") return null;
  return (
    <p class="error" role="alert">
      {state.error}
    </p>
  );
}
