import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

/**
 * What the global setups start once for a whole run. Vitest calls a project's globalSetup files for that
 * project, and the sqlite and postgres projects list the same ones (vitest.config.ts): without this, a run
 * kept two Temporal dev servers and two PostgreSQL servers busy side by side. Both projects' setups run in
 * vitest's one main process, so the first call starts a resource, the others share it, and the last
 * release stops it.
 */
interface SharedResource {
  value: Promise<unknown>;
  users: number;
  stop: () => Promise<void>;
}

const registryKey = Symbol.for("flowlog.test.runResources");
const registry = globalThis as { [registryKey]?: Map<string, SharedResource> };
registry[registryKey] ??= new Map<string, SharedResource>();
const resources = registry[registryKey];

export interface RunResource<T> {
  value: T;
  /** Ends this project's use; the last one stops the resource. */
  release(): Promise<void>;
}

export async function shareForRun<T>(
  name: string,
  start: () => Promise<T>,
  stop: (value: T) => Promise<void>,
): Promise<RunResource<T>> {
  let resource = resources.get(name);
  if (!resource) {
    const value = start();
    resource = { value, users: 0, stop: async () => stop(await value) };
    resources.set(name, resource);
  }
  const shared = resource;
  shared.users += 1;
  const value = (await shared.value) as T;
  let released = false;
  return {
    value,
    async release() {
      if (released) return;
      released = true;
      shared.users -= 1;
      if (shared.users > 0) return;
      resources.delete(name);
      await shared.stop();
    },
  };
}

/**
 * The run's temporary directory: TMPDIR for the run's main process and everything started after it (the
 * test workers, and the servers and processes they start, which make their data dirs with mkdtemp under
 * os.tmpdir()), removed with all it holds when the run ends. Runs used to leave every data dir behind, a
 * few hundred megabytes a run (logs-export's store alone is 500 MB). FLOWLOG_TEST_KEEP_TMP=1 keeps it, for
 * a failure's files; the path is printed then.
 */
export function runTemporaryDirectory(): Promise<RunResource<string>> {
  return shareForRun(
    "tmp",
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), "flowlog-run-"));
      // Others may pass through to what they own inside (PostgreSQL's data dir, run as its own user under
      // root), as through /tmp, but not list it.
      await chmod(dir, 0o711);
      process.env.TMPDIR = dir;
      return dir;
    },
    async (dir) => {
      if (process.env.FLOWLOG_TEST_KEEP_TMP === "1") {
        console.log(`FLOWLOG_TEST_KEEP_TMP: the run's temporary files are kept in ${dir}`);
        return;
      }
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  );
}
