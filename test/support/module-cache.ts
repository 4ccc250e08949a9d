import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * What a flowlog process loaded: `env` preloads loaded-modules.cjs, which writes the process's CommonJS
 * module cache to a file at exit; `loaded()` reads it back, one path an entry. Packages without an ESM build
 * (OpenTelemetry's, Temporal's, commander) are in that cache however they were imported.
 */
export function moduleCacheProbe(): { env: Record<string, string>; loaded(): string[] } {
  const file = path.join(mkdtempSync(path.join(tmpdir(), "flowlog-modules-")), "loaded.txt");
  return {
    env: {
      NODE_OPTIONS: `--require ${path.join(import.meta.dirname, "loaded-modules.cjs")}`,
      FLOWLOG_LOADED_MODULES_FILE: file,
    },
    loaded: () => readFileSync(file, "utf8").split("\n"),
  };
}
