/**
 * What the benches of one --quick run share instead of each starting its own (issue 50: the quick run
 * within four minutes on two cores): a dev-server stack, a PostgreSQL server, a no-op worker. Each costs
 * seconds to start and stop, more than a quick load of it. Full mode shares nothing: each bench starts
 * what it measures, as its figures have always been taken.
 */
const running = new Map<string, { value: Promise<unknown>; stop(): Promise<void> }>();

/** The run's one `name`, started by `start` on first use. Its users never stop it: `stopShared` does. */
export function shared<T>(
  name: string,
  start: () => Promise<T>,
  stop: (value: T) => Promise<void>,
): Promise<T> {
  let entry = running.get(name);
  if (!entry) {
    const value = start();
    entry = { value, stop: () => value.then(stop, () => undefined) };
    running.set(name, entry);
  }
  return entry.value as Promise<T>;
}

/** Stops what the run shared, the last started first (a worker before the dev server it polls). */
export async function stopShared(): Promise<void> {
  const entries = [...running.values()].reverse();
  running.clear();
  for (const entry of entries) await entry.stop();
}
