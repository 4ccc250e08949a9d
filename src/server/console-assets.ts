import { existsSync, readdirSync, readFileSync } from "node:fs";
import { extname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Config } from "../config/config.js";
import { chooseEncoding, type ResponseEncoding } from "../gateway/response-encoding.js";
import type { NodeRequest, NodeResponse } from "../rpc/node-http.js";
import { executionWorkflowId } from "../temporal/execution-ids.js";
import { escapeHtml } from "../util/html.js";
import { repoPath } from "../util/repo-root.js";
import { requestUrl } from "../util/request-url.js";

/** Where `scripts/build-console.mjs` puts the built console (issue 17). */
const builtConsole = pathToFileURL(`${repoPath("dist", "console")}/`);

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
  ".txt": "text/plain; charset=utf-8",
};

/**
 * The page talks to this origin only, runs only its own script, and may not be framed: an injected script
 * could read the key in sessionStorage, so nothing but the built bundle may run.
 */
const securityHeaders = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

interface Asset {
  body: Buffer;
  type: string;
  /** Hashed names never change content, so browsers keep them; the document is checked every time. */
  cacheControl: string;
  encoded: Partial<Record<ResponseEncoding, Buffer>>;
}

/** What the server tells the page in its document, since the page knows no address but this origin. */
export type ConsoleSettings = Partial<Pick<Config, "temporalUiUrl" | "temporalNamespace">>;

export interface ConsoleAssets {
  /** Answers `GET /` and `GET /console/<file>`; false for any other request. */
  answer(req: NodeRequest, res: NodeResponse, url?: URL): boolean;
}

/**
 * The console's files, read once at start, with the compressed copies the build made, so a request costs
 * a lookup. Whether to send a compressed copy follows D29's threshold like every other answer. The document
 * gets this server's settings filled in, so the build's compressed copies of it are not used.
 */
export function loadConsoleAssets(compressMinBytes: number, settings: ConsoleSettings = {}): ConsoleAssets {
  const assets = new Map<string, Asset>();
  const folder = fileURLToPath(builtConsole);
  if (existsSync(folder)) {
    const names = readdirSync(folder).filter((name) => contentTypes[extname(name)]);
    for (const name of names) {
      const built = readFileSync(new URL(name, builtConsole));
      const document = name === "index.html";
      const body = document ? withSettings(built, settings) : built;
      const path = document ? "/" : `/console/${name}`;
      const encoded: Asset["encoded"] = {};
      if (!document && body.length >= compressMinBytes) {
        for (const [encoding, suffix] of [
          ["br", ".br"],
          ["gzip", ".gz"],
        ] as const) {
          const file = new URL(name + suffix, builtConsole);
          if (existsSync(file)) encoded[encoding] = readFileSync(file);
        }
      }
      assets.set(path, {
        body,
        type: contentTypes[extname(name)] ?? "application/octet-stream",
        cacheControl: path === "/" ? "no-cache" : "public, max-age=31536000, immutable",
        encoded,
      });
    }
  }

  return {
    answer(req, res, url = requestUrl(req)) {
      if (req.method !== "GET" && req.method !== "HEAD") return false;
      const path = url.pathname;
      if (path !== "/" && !path.startsWith("/console/")) return false;
      const asset = assets.get(path);
      if (!asset) {
        const built = assets.size > 0;
        res.writeHead(built ? 404 : 503, { "content-type": "text/plain; charset=utf-8", ...securityHeaders });
        res.end(
          built
            ? `no console file ${path}\n`
            : "The console is not built: run `node scripts/build-console.mjs` (npm start does).\n",
        );
        return true;
      }
      const encoding = chooseEncoding(req.headers["accept-encoding"], asset.body.length, compressMinBytes);
      const body = (encoding && asset.encoded[encoding]) || asset.body;
      res.writeHead(200, {
        "content-type": asset.type,
        "content-length": body.length,
        "cache-control": asset.cacheControl,
        vary: "accept-encoding",
        ...(body !== asset.body && encoding ? { "content-encoding": encoding } : {}),
        ...securityHeaders,
      });
      if (req.method === "HEAD") res.end();
      else res.end(body);
      return true;
    },
  };
}

/**
 * The page's link to an execution in the Temporal Web UI, as a template with `{executionId}` for the page
 * to fill in. The server writes it whole because it alone knows the three parts: the UI's address, the
 * namespace, and how an execution's Temporal workflow id is made (execution-ids.ts, which the console may
 * not import). A template keeps that rule in one place without adding a Temporal detail to the public API.
 * The UI opens the latest run of a workflow id at this path.
 */
function temporalExecutionUrl({ temporalUiUrl, temporalNamespace }: ConsoleSettings): string {
  if (!temporalUiUrl || !temporalNamespace) return "";
  const namespace = encodeURIComponent(temporalNamespace);
  return `${temporalUiUrl}/namespaces/${namespace}/workflows/${executionWorkflowId("{executionId}")}`;
}

/** `console/index.html` marks where each setting goes; an operator's value is escaped as an attribute. */
function withSettings(html: Buffer, settings: ConsoleSettings): Buffer {
  const filled = html
    .toString("utf8")
    .replace("%TEMPORAL_EXECUTION_URL%", () => escapeHtml(temporalExecutionUrl(settings)));
  return Buffer.from(filled, "utf8");
}
