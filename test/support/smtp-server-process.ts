/**
 * A real SMTP server in a process of its own (issue 5, "Tests that must exist"): `node --import tsx` this file
 * with one JSON argument, {@link SmtpServerSettings}. It listens on 127.0.0.1 at a free port, requires AUTH with
 * the given credentials (echoing a wrong password in its 535 reply), and prints JSON lines on stdout: first `{"listening": port}`, then one
 * `{"message": {...}}` per accepted message with its envelope and raw RFC 822 text.
 */
import { SMTPServer, type SMTPServerError } from "smtp-server";

export interface SmtpServerSettings {
  user: string;
  password: string;
  /** Reply code to answer RCPT TO with, per recipient address (lowercase): 451 to defer, 550 to refuse. */
  replies: Record<string, number>;
}

export interface SmtpServerLine {
  listening?: number;
  message?: { mailFrom: string; rcptTo: string[]; user: string; raw: string };
}

const settings = JSON.parse(process.argv[2] ?? "{}") as SmtpServerSettings;

function print(line: SmtpServerLine): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function smtpError(responseCode: number, message: string): SMTPServerError {
  return Object.assign(new Error(message), { responseCode });
}

const server = new SMTPServer({
  // Plain connections on loopback: no STARTTLS to negotiate, and AUTH allowed without TLS.
  disabledCommands: ["STARTTLS"],
  allowInsecureAuth: true,
  authOptional: false,
  logger: false,
  onAuth(auth, _session, callback) {
    if (auth.username === settings.user && auth.password === settings.password) {
      callback(null, { user: auth.username });
    } else {
      // Echoes what it was given, like a careless server could: the client must still redact it (D24).
      callback(smtpError(535, `Authentication failed for ${auth.username}:${auth.password}`));
    }
  },
  onRcptTo(address, _session, callback) {
    const code = settings.replies[address.address.toLowerCase()];
    if (code === undefined) callback();
    else callback(smtpError(code, code < 500 ? "Mailbox busy, try again later" : "No such mailbox"));
  },
  onData(stream, session, callback) {
    const chunks: Buffer[] = [];
    stream.on("data", (chunk: Buffer) => chunks.push(chunk));
    stream.on("end", () => {
      const { mailFrom, rcptTo } = session.envelope;
      print({
        message: {
          mailFrom: mailFrom === false ? "" : mailFrom.address,
          rcptTo: rcptTo.map((recipient) => recipient.address),
          user: String(session.user),
          raw: Buffer.concat(chunks).toString("utf8"),
        },
      });
      callback();
    });
  },
});

server.listen(0, "127.0.0.1", () => {
  const address = server.server.address();
  print({ listening: typeof address === "object" && address ? address.port : 0 });
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
