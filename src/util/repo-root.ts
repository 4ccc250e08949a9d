import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The repository's root: the nearest folder above this module that holds `package.json`. flowlog runs from
 * its sources under tsx (tests) and compiled into `dist/js/` (`npm start`, `flowlog serve|worker|dev`), so a
 * module's own location says nothing fixed about where `gen/`, `dist/console/` or `.tools/` are: every path
 * to them starts here.
 */
export const repoRoot = findRoot(path.dirname(fileURLToPath(import.meta.url)));

/** A path inside the repository, from its parts. */
export function repoPath(...parts: string[]): string {
  return path.join(repoRoot, ...parts);
}

function findRoot(folder: string): string {
  if (existsSync(path.join(folder, "package.json"))) return folder;
  const parent = path.dirname(folder);
  if (parent === folder) throw new Error("flowlog: no package.json above the running module");
  return findRoot(parent);
}
