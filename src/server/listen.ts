import type { AddressInfo, Server } from "node:net";
import { ConfigError } from "../config/config.js";

/**
 * Starts `server` on `port`. A port another process holds (a second `npm start`, an old server still
 * running) stops the start with one line naming the variable that sets it, like any bad setting (exit 2),
 * rather than Node's stack trace.
 */
export function listenOn(
  server: Server,
  where: { port: number; host?: string | undefined; variable: string },
): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EADDRINUSE") return reject(error);
      reject(
        new ConfigError([
          `${where.variable}: port ${where.port} is already in use by another process; stop it or set ${where.variable} to a free port`,
        ]),
      );
    });
    server.listen(where.port, where.host, () => resolve());
  });
}

/**
 * The URL a client on this machine reaches a listening `server` at: `localhost` when it listens on every
 * interface, else the address it is bound to (HOST, D46), which `localhost` may not resolve to.
 */
export function listeningUrl(server: Server): { url: string; port: number } {
  const { address, port } = server.address() as AddressInfo;
  const everywhere = address === "::" || address === "0.0.0.0";
  const host = everywhere ? "localhost" : address.includes(":") ? `[${address}]` : address;
  return { url: `http://${host}:${port}`, port };
}
