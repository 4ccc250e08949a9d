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

/**
 * A free loopback port from `min` to `max`, for programs that cannot take any port the system hands out
 * (Temporal stores its membership ports as PostgreSQL smallints: 32767 at most).
 */
export async function freePortIn(min: number, max: number): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = min + Math.floor(Math.random() * (max - min + 1));
    if (await isFree(port)) return port;
  }
  throw new Error(`no free port from ${min} to ${max} after 100 tries`);
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
      .once("error", () => resolve(false))
      .listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
