import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AccountsService } from "../src/services/accounts/accounts-service.js";
import { hashApiKey } from "../src/services/accounts/api-keys.js";
import { AccountsStore } from "../src/store/accounts-store.js";
import { PostgresAccountsStore } from "../src/store/postgres/accounts-store.js";
import type { StoreArea } from "../src/store/store.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import { type ContractDatabase, storeKinds } from "./support/store-kinds.js";

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

type Accounts = StoreArea<AccountsStore>;

const kinds = storeKinds<Accounts>(
  { sqlite: (db) => new AccountsStore(db), postgres: (pool) => new PostgresAccountsStore(pool) },
  () => server,
);

const t0 = Date.parse("2026-11-01T10:00:00.000Z");

describe.each(kinds)("users, workspaces and API keys on %s (D5, D6, D32)", (_, open) => {
  let db: ContractDatabase<Accounts>;
  let accounts: Accounts;
  beforeEach(async () => {
    db = await open();
    accounts = db.areas;
  });
  afterEach(() => db.close());

  const user = (n: number, plan: "free" | "pro" = "free") => ({
    id: `usr_${n}`,
    email: `user${n}@example.test`,
    plan,
    createdAt: t0 + n,
  });
  const workspace = (n: number) => ({ id: `ws_${n}`, name: `Workspace ${n}`, createdAt: t0 + n });

  it("reads back users and workspaces as written, listed oldest first", async () => {
    await accounts.createUser(user(2, "pro"));
    await accounts.createUser(user(1));
    expect(await accounts.getUser("usr_2")).toEqual(user(2, "pro"));
    expect(await accounts.getUser("usr_missing")).toBeUndefined();
    expect(await accounts.listUsers()).toEqual([user(1), user(2, "pro")]);
    await accounts.createWorkspace(workspace(2), ["usr_1", "usr_2"]);
    await accounts.createWorkspace(workspace(1), []);
    expect(await accounts.getWorkspace("ws_2")).toEqual(workspace(2));
    expect(await accounts.listWorkspaces()).toEqual([workspace(1), workspace(2)]);
    expect(await accounts.listWorkspaces("usr_1")).toEqual([workspace(2)]);
    expect(await accounts.membersOf("ws_2")).toEqual(["usr_1", "usr_2"]);
    expect(await accounts.membersOf("ws_1")).toEqual([]);
  });

  it("a second user with the same address is refused, and the service says already_exists on either store", async () => {
    const service = new AccountsService(accounts, () => t0);
    await service.createUser("grace@example.test");
    const refusal = await service.createUser("GRACE@example.test").catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ConnectError);
    expect((refusal as ConnectError).code).toBe(Code.AlreadyExists);
    expect(await service.listUsers()).toHaveLength(1);
  });

  it("a workspace whose member does not exist is not written, nor any of its memberships", async () => {
    await accounts.createUser(user(1));
    await expect(accounts.createWorkspace(workspace(1), ["usr_1", "usr_ghost"])).rejects.toThrow();
    expect(await accounts.getWorkspace("ws_1")).toBeUndefined();
    expect(await accounts.isMember("usr_1", "ws_1")).toBe(false);
  });

  it("membership: adding twice changes nothing, and another connection sees a new member at once", async () => {
    await accounts.createUser(user(1));
    await accounts.createUser(user(2));
    await accounts.createWorkspace(workspace(1), ["usr_1"]);
    const other = await db.connect();
    expect(await other.isMember("usr_2", "ws_1")).toBe(false);
    await accounts.addMember("ws_1", "usr_2");
    await accounts.addMember("ws_1", "usr_2");
    expect(await other.isMember("usr_2", "ws_1")).toBe(true);
    expect(await accounts.membersOf("ws_1")).toEqual(["usr_1", "usr_2"]);
  });

  it("a key is found by its hash only while live; a revocation is seen by another connection's next lookup", async () => {
    await accounts.createUser(user(1, "pro"));
    const hash = hashApiKey("flk_contract_key");
    await accounts.createApiKey(
      { id: "key_1", userId: "usr_1", prefix: "flk_contract", createdAt: t0 },
      hash,
    );
    const other = await db.connect();
    expect(await other.ownerOfKeyHash(hash)).toEqual({ keyId: "key_1", user: user(1, "pro") });
    expect(await other.ownerOfKeyHash(hashApiKey("flk_other_key"))).toBeUndefined();
    expect(await accounts.revokeApiKey("key_1", t0 + 5)).toBe(true);
    expect(await other.ownerOfKeyHash(hash)).toBeUndefined();
    expect(await accounts.revokeApiKey("key_1", t0 + 6)).toBe(false);
    expect(await accounts.revokeApiKey("key_missing", t0 + 6)).toBe(false);
    expect(await accounts.getApiKey("key_1")).toMatchObject({ revokedAt: t0 + 5, lastUsedAt: null });
  });

  it("lists a user's keys oldest first, without their hashes, and last use never moves backwards", async () => {
    await accounts.createUser(user(1));
    for (const n of [2, 1]) {
      await accounts.createApiKey(
        { id: `key_${n}`, userId: "usr_1", prefix: `flk_${n}`, createdAt: t0 + n },
        hashApiKey(`flk_key_${n}`),
      );
    }
    await accounts.touchApiKey("key_1", t0 + 100);
    await accounts.touchApiKey("key_1", t0 + 50);
    const listed = await accounts.listApiKeys("usr_1");
    expect(listed).toEqual([
      {
        id: "key_1",
        userId: "usr_1",
        prefix: "flk_1",
        createdAt: t0 + 1,
        lastUsedAt: t0 + 100,
        revokedAt: null,
      },
      { id: "key_2", userId: "usr_1", prefix: "flk_2", createdAt: t0 + 2, lastUsedAt: null, revokedAt: null },
    ]);
    expect(JSON.stringify(listed)).not.toContain("hash");
  });
});
