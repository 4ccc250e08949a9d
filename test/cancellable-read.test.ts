import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cancellableRead } from "../src/store/postgres/database.js";
import { sharedPostgres } from "./support/shared-postgres.js";

/**
 * D46: a tenant's read on PostgreSQL stops when its caller leaves, whenever that is. A caller can leave
 * while the read still waits for a connection of its pool (every one busy with other tenants' reads);
 * the read must then not run once a connection frees up, holding it for nobody until its time limit.
 */

const server = sharedPostgres();

let pool: pg.Pool;

beforeEach(async () => {
  pool = new pg.Pool({ connectionString: await server.createDatabase(), max: 1 });
});

afterEach(async () => {
  await pool.end();
});

const overTime = (limitMs: number) => new Error(`over ${limitMs} ms`);

describe("cancellableRead (D46)", () => {
  it("a caller who leaves while the pool's connections are all busy gets its reason; the read never runs", async () => {
    const busy = await pool.connect();
    const caller = new AbortController();
    let ran = false;
    const read = cancellableRead(
      pool,
      pool,
      { signal: caller.signal, limitMs: 30_000, overTime },
      async (client) => {
        ran = true;
        await client.query("SELECT pg_sleep(30)");
      },
    );
    const outcome = read.then(
      () => "answered",
      (error: unknown) => error,
    );
    // The read waits in pg's queue for the one connection.
    await expect.poll(() => pool.waitingCount).toBe(1);
    caller.abort(new Error("the client left"));
    busy.release();
    expect(await outcome).toEqual(new Error("the client left"));
    expect(ran).toBe(false);
    // The connection went back to the pool, usable by the next read.
    const { rows } = await pool.query<{ one: number }>("SELECT 1 AS one");
    expect(rows).toEqual([{ one: 1 }]);
  });
});
