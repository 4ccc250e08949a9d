import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ParkedOutputsStore, parkedOutputRetentionMs } from "../src/store/parked-outputs-store.js";
import { PostgresParkedOutputsStore } from "../src/store/postgres/parked-outputs-store.js";
import type { StoreArea } from "../src/store/store.js";
import { sharedPostgres } from "./support/shared-postgres.js";
import { type ContractDatabase, storeKinds } from "./support/store-kinds.js";

/** Databases on the run's one PostgreSQL server (issue 50: no server of its own). */
const server = sharedPostgres();

type Parked = StoreArea<ParkedOutputsStore>;

const kinds = storeKinds<Parked>(
  { sqlite: (db) => new ParkedOutputsStore(db), postgres: (pool) => new PostgresParkedOutputsStore(pool) },
  () => server,
);

const t0 = Date.parse("2026-11-27T10:00:00.000Z");
const outcome = (n: number) => JSON.stringify({ output: { data: "x".repeat(n), status: 200 } });

describe.each(kinds)("block outputs parked outside Temporal's payloads, on %s", (_, open) => {
  let db: ContractDatabase<Parked>;
  let parked: Parked;
  beforeEach(async () => {
    db = await open();
    parked = db.areas;
  });
  afterEach(() => db.close());

  it("hands back what was parked under its execution and key, to another process too; nothing else", async () => {
    await parked.park("ex_1", "run/3", outcome(900 * 1024), t0);
    await parked.park("ex_1", "run/4", outcome(1), t0);
    const other = await db.connect();
    expect(await other.read("ex_1", "run/3")).toBe(outcome(900 * 1024));
    expect(await other.read("ex_1", "run/4")).toBe(outcome(1));
    expect(await parked.read("ex_1", "run/5")).toBeUndefined();
    expect(await parked.read("ex_2", "run/3")).toBeUndefined();
  });

  it("reading does not consume: a block activity run again after its worker died finds it again", async () => {
    await parked.park("ex_1", "run/3", outcome(10), t0);
    expect(await parked.read("ex_1", "run/3")).toBe(outcome(10));
    expect(await parked.read("ex_1", "run/3")).toBe(outcome(10));
  });

  it("parking a key again (a workflow task run again) replaces it", async () => {
    await parked.park("ex_1", "run/3", outcome(10), t0);
    await parked.park("ex_1", "run/3", outcome(20), t0 + 1_000);
    expect(await parked.read("ex_1", "run/3")).toBe(outcome(20));
  });

  it("the execution's log write releases all its outputs and no other execution's", async () => {
    await parked.park("ex_1", "run/3", outcome(10), t0);
    await parked.park("ex_1", "run/4", outcome(10), t0);
    await parked.park("ex_2", "run/3", outcome(10), t0);
    await parked.release("ex_1");
    expect(await parked.read("ex_1", "run/3")).toBeUndefined();
    expect(await parked.read("ex_1", "run/4")).toBeUndefined();
    expect(await parked.read("ex_2", "run/3")).toBe(outcome(10));
    await parked.release("ex_1");
  });

  it("outputs of executions that never logged (terminated) are swept once past the retention", async () => {
    await parked.park("ex_gone", "run/1", outcome(10), t0);
    await parked.park("ex_live", "run/1", outcome(10), t0 + parkedOutputRetentionMs);
    await parked.park("ex_new", "run/1", outcome(10), t0 + parkedOutputRetentionMs + 1);
    expect(await parked.read("ex_gone", "run/1")).toBeUndefined();
    expect(await parked.read("ex_live", "run/1")).toBe(outcome(10));
    const rows = await db.query<{ n: number }>("SELECT count(*) AS n FROM parked_outputs");
    expect(Number(rows[0]?.n)).toBe(2);
  });
});
