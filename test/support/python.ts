import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

const repoRoot = path.resolve(import.meta.dirname, "../..");

/**
 * A Python with the packages of `requirements` from PyPI, in the git-ignored venv .tools/<name>,
 * (re)installed when that file changes, so `npm test` on a fresh clone needs nothing but python3.
 * Each caller gets its own venv: test files run in parallel processes, and two pip installs into
 * one venv at once would corrupt it.
 */
function ensurePythonVenv(name: string, requirements: string): string {
  const venv = path.join(repoRoot, ".tools", name);
  const python = path.join(venv, "bin", "python");
  const marker = path.join(venv, "requirements.sha256");
  const wanted = createHash("sha256").update(readFileSync(requirements)).digest("hex");
  if (existsSync(python) && existsSync(marker) && readFileSync(marker, "utf8") === wanted) return python;
  execFileSync("python3", ["-m", "venv", venv], { stdio: "inherit" });
  execFileSync(
    python,
    ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", requirements],
    { stdio: "inherit" },
  );
  writeFileSync(marker, wanted);
  return python;
}

/** grpcio and its reflection client, for the polyglot tests. */
export function ensurePythonGrpc(): string {
  return ensurePythonVenv("python", path.join(repoRoot, "test", "polyglot", "requirements.txt"));
}

/** The schemathesis CLI, for the fuzz test of the REST surface. */
export function ensureSchemathesis(): string {
  const python = ensurePythonVenv("python-fuzz", path.join(repoRoot, "test", "fuzz", "requirements.txt"));
  return path.join(path.dirname(python), "schemathesis");
}

/** Standard Webhooks' own verifier from PyPI (D39), run by test/webhook-verifiers/verify_standard.py. */
export function ensureStandardWebhooks(): string {
  return ensurePythonVenv(
    "python-standardwebhooks",
    path.join(repoRoot, "test", "webhook-verifiers", "requirements.txt"),
  );
}
