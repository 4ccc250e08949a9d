import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { freeListeningPort, freePortIn } from "../src/util/free-port.js";

/**
 * A server told its port long before it binds it (a cluster's nginx, a paused PostgreSQL) must not get
 * one that an outgoing connection can take meanwhile: the kernel hands those out from its ephemeral range.
 */
describe("freeListeningPort", () => {
  const [ephemeralStart, ephemeralEnd] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
    .trim()
    .split(/\s+/)
    .map(Number) as [number, number];

  it("answers ports outside the kernel's ephemeral range, free to bind", async () => {
    for (let n = 0; n < 20; n++) {
      const port = await freeListeningPort();
      expect(port < ephemeralStart || port > ephemeralEnd).toBe(true);
      await new Promise<void>((resolve, reject) => {
        const server = createServer().once("error", reject);
        server.listen(port, "127.0.0.1", () => server.close(() => resolve()));
      });
    }
  });

  it("never answers the same port twice in one process, though none was bound in between", async () => {
    // Ten asks for a port of a range of ten. One another process holds, or one this file was handed
    // already, is refused; every other is answered once.
    const answered: number[] = [];
    for (let n = 0; n < 10; n++) {
      const port = await freePortIn(19_990, 19_999).catch(() => undefined);
      if (port !== undefined) answered.push(port);
    }
    expect(answered.length).toBeGreaterThan(5);
    expect(new Set(answered).size).toBe(answered.length);
    for (const port of answered) expect(port >= 19_990 && port <= 19_999).toBe(true);
    // The range used up, it says so rather than answer one of them again.
    await expect(freePortIn(19_990, 19_999)).rejects.toThrow(
      /no free port from 19990 to 19999 after 100 tries/,
    );
  });
});
