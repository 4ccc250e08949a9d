import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** A loopback port free at the time of asking, for a child process that must be told its port up front. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
    server.on("error", reject);
  });
}

/** Ports this process has handed out from a range, so that two asks in a row never get the same one. */
const handedOut = new Set<number>();

/**
 * A free loopback port from `min` to `max`, for programs that cannot take any port the system hands out
 * (Temporal stores its membership ports as PostgreSQL smallints: 32767 at most).
 */
export async function freePortIn(min: number, max: number): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = min + Math.floor(Math.random() * (max - min + 1));
    if (handedOut.has(port)) continue;
    if (await isFree(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port from ${min} to ${max} after 100 tries`);
}

/**
 * A free loopback port below the kernel's ephemeral range, for a server that is told its port long before
 * it binds it, or keeps it across restarts. A port from `freePort` is in that range, where any outgoing
 * connection on the machine may take it as its local port in the meantime, and the server's bind then
 * fails with EADDRINUSE: the likeliest cause of a cluster's nginx failing to start once in CI, its ports
 * chosen a minute before it bound them.
 */
export function freeListeningPort(): Promise<number> {
  const ephemeralStart = ephemeralPortStart();
  // Where the ephemeral range leaves too little room below it, the kernel's choice is the better bet.
  return ephemeralStart > 12_000 ? freePortIn(10_000, ephemeralStart - 1) : freePort();
}

/**
 * A free listening port for a Temporal server's services: Temporal keeps their ports in PostgreSQL
 * smallint columns (32767 at most), and the range stays below Linux's default ephemeral range.
 */
export function freeTemporalPort(): Promise<number> {
  return freePortIn(20_000, 32_000);
}

/** Where Linux's net.ipv4.ip_local_port_range starts; its usual default elsewhere. */
function ephemeralPortStart(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 0) return low;
  } catch {
    // Not Linux: fall through.
  }
  return 32_768;
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
      .once("error", () => resolve(false))
      .listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
