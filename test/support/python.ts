import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const repoRoot = path.resolve(import.meta.dirname, "../..");
const venv = path.join(repoRoot, ".tools", "python");
const requirements = path.join(repoRoot, "test", "polyglot", "requirements.txt");

/**
 * A Python with grpcio from PyPI, in a git-ignored venv, (re)installed when requirements.txt
 * changes, so `npm test` on a fresh clone needs nothing but python3.
 */
export function ensurePythonGrpc(): string {
  const python = path.join(venv, "bin", "python");
  const marker = path.join(venv, "requirements.sha256");
  const wanted = createHash("sha256").update(readFileSync(requirements)).digest("hex");
  if (existsSync(python) && existsSync(marker) && readFileSync(marker, "utf8") === wanted) return python;
  execFileSync("python3", ["-m", "venv", venv], { stdio: "inherit" });
  execFileSync(
    python,
    ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", requirements],
    {
      stdio: "inherit",
    },
  );
  writeFileSync(marker, wanted);
  return python;
}
