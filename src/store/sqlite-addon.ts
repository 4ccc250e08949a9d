import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import Database from "better-sqlite3";
import { repoPath } from "../util/repo-root.js";

const { version } = createRequire(import.meta.url)("better-sqlite3/package.json") as { version: string };
const builtForThisNode = repoPath(
  ".tools",
  "addons",
  `node-v${process.versions.modules}`,
  `better-sqlite3-${version}.node`,
);

/**
 * The native addon better-sqlite3 loads in this process. `npm install` builds one into node_modules for the
 * Node that ran it, Node 20 on these machines; `scripts/node24.mjs` builds one for Node 24 under
 * `.tools/addons`, named by the Node ABI and better-sqlite3's version, so one node_modules serves both Nodes
 * (issue 50). Undefined: node_modules' own.
 */
export const sqliteAddon: string | undefined = existsSync(builtForThisNode) ? builtForThisNode : undefined;

/** A connection to a SQLite file (or `:memory:`), through the addon built for the running Node. */
export function openSqlite(file: string, options: Database.Options = {}): Database.Database {
  return new Database(file, { ...options, nativeBinding: sqliteAddon });
}
