import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { UserRecord } from "../../src/store/records.js";
import { openStore, type Store } from "../../src/store/store.js";
import { newId } from "../../src/util/ids.js";

/** A store on a fresh SQLite file in a temp directory, with one enterprise user owning one workspace. */
export interface BenchStore {
  store: Store;
  dataDir: string;
  user: UserRecord;
  workspaceId: string;
  /** Closes the store and deletes its directory. */
  dispose(): Promise<void>;
}

export async function openBenchStore(): Promise<BenchStore> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "flowlog-bench-"));
  const store = openStore({ dataDir });
  const now = Date.now();
  const user: UserRecord = {
    id: newId("usr"),
    email: "bench@example.test",
    plan: "enterprise",
    createdAt: now,
  };
  const workspaceId = newId("ws");
  await store.accounts.createUser(user);
  await store.accounts.createWorkspace({ id: workspaceId, name: "bench", createdAt: now }, [user.id]);
  return {
    store,
    dataDir,
    user,
    workspaceId,
    dispose: async () => {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
