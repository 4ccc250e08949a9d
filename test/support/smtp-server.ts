import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import PostalMime, { type Email } from "postal-mime";
import type { SmtpServerLine, SmtpServerSettings } from "./smtp-server-process.js";

/** A message as the SMTP server received it: the envelope, and the RFC 822 data parsed back into parts. */
export interface ReceivedMail {
  mailFrom: string;
  rcptTo: string[];
  /** The user the client authenticated as. */
  user: string;
  raw: string;
  parsed: Email;
}

export interface SmtpServer {
  port: number;
  /** `smtp://user:password@127.0.0.1:port`, the form of `FLOWLOG_SMTP_URL` (D4). */
  url: string;
  received: ReceivedMail[];
  /** Resolves once `count` messages have arrived (they are parsed in arrival order). */
  waitForMessages(count: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

const serverScript = fileURLToPath(new URL("./smtp-server-process.ts", import.meta.url));

/** Starts {@link serverScript} in a child process and follows the JSON lines it prints. */
export async function startSmtpServer(settings: SmtpServerSettings): Promise<SmtpServer> {
  const child = spawn(process.execPath, ["--import", "tsx", serverScript, JSON.stringify(settings)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const received: ReceivedMail[] = [];
  const waiters: Array<() => void> = [];
  let parsing = Promise.resolve();
  const listening = new Promise<number>((resolve, reject) => {
    child.once("exit", () => reject(new Error("the SMTP server process exited before it listened")));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (line) => {
      const { listening: port, message } = JSON.parse(line) as SmtpServerLine;
      if (port !== undefined) resolve(port);
      if (!message) return;
      parsing = parsing.then(async () => {
        received.push({ ...message, parsed: await PostalMime.parse(message.raw) });
        for (const wake of waiters.splice(0)) wake();
      });
    });
  });
  const port = await listening;
  const credentials = `${encodeURIComponent(settings.user)}:${encodeURIComponent(settings.password)}`;
  return {
    port,
    url: `smtp://${credentials}@127.0.0.1:${port}`,
    received,
    async waitForMessages(count) {
      while (received.length < count) await new Promise<void>((wake) => waiters.push(wake));
      return received.slice(0, count);
    },
    async close() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}
