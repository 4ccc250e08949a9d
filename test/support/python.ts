import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { once } from "node:events";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";

const repoRoot = path.resolve(import.meta.dirname, "../..");

/**
 * A Python with the packages of `requirements` from PyPI, in the git-ignored venv .tools/<name>,
 * (re)installed when that file changes, so `npm test` on a fresh clone needs nothing but python3.
 * Each caller gets its own venv: test files run in parallel processes, and two pip installs into
 * one venv at once would corrupt it.
 */
function ensurePythonVenv(name: string, requirements: string): string {
  return ensureVenvWith(name, ["-r", path.relative(repoRoot, requirements)], [requirements]);
}

/**
 * A venv with `pip install <installArgs>` (paths in them from the checkout's root, where pip runs), done
 * again when a byte of `inputs` (files) has changed.
 */
function ensureVenvWith(name: string, installArgs: string[], inputs: string[]): string {
  const venv = path.join(toolsDir(), name);
  const python = path.join(venv, "bin", "python");
  const marker = path.join(venv, "requirements.sha256");
  // Paths from the checkout's root, in the arguments and the inputs: a worktree sharing .tools (a symlink)
  // then agrees on the marker, and does not make the venv anew under a test of another checkout using it.
  const hash = createHash("sha256").update(installArgs.join("\0"));
  for (const input of inputs) hash.update(path.relative(repoRoot, input)).update(readFileSync(input));
  const wanted = hash.digest("hex");
  if (existsSync(python) && existsSync(marker) && readFileSync(marker, "utf8") === wanted) return python;
  // Made anew, not over the old one: pip leaves installed entry scripts as they are, and theirs name the
  // python of the path the venv was made at (a worktree's, through a symlinked .tools), which may be gone.
  rmSync(venv, { recursive: true, force: true });
  execFileSync("python3", ["-m", "venv", venv], { stdio: "inherit" });
  execFileSync(python, ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", ...installArgs], {
    stdio: "inherit",
    cwd: repoRoot,
  });
  writeFileSync(marker, wanted);
  return python;
}

/**
 * The checkout's .tools by its real path: a worktree's is a symlink to the main checkout's, and a venv made
 * through the link would name the worktree's path in the scripts pip installs, gone with the worktree.
 */
function toolsDir(): string {
  const tools = path.join(repoRoot, ".tools");
  mkdirSync(tools, { recursive: true });
  return realpathSync(tools);
}

/**
 * flowlog's Python client package (clients/python, D49) with its `standardwebhooks` extra, installed the
 * way its README says, `pip install ./clients/python[standardwebhooks]`, again whenever a file of it changes.
 */
export function ensurePythonClient(): string {
  const client = path.join(repoRoot, "clients", "python");
  const files = readdirSync(client, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.parentPath.includes("__pycache__"))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
  return ensureVenvWith(
    "python-client",
    ["--force-reinstall", `./${path.relative(repoRoot, client)}[standardwebhooks]`],
    files,
  );
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

/**
 * openapi-python-client, the generator a Python user points at the served OpenAPI document (issue 55);
 * answers the venv's bin directory, which holds the generator and the ruff it formats its output with.
 */
export function ensureOpenApiPythonClient(): string {
  const python = ensurePythonVenv(
    "python-openapi",
    path.join(repoRoot, "test", "openapi-generators", "requirements.txt"),
  );
  return path.dirname(python);
}

/** Standard Webhooks' own verifier from PyPI (D39), run by test/webhook-verifiers/verify_standard.py. */
export function ensureStandardWebhooks(): string {
  return ensurePythonVenv(
    "python-standardwebhooks",
    path.join(repoRoot, "test", "webhook-verifiers", "requirements.txt"),
  );
}

/** Every venv the suite uses, each made or brought up to date (global-setup.ts, once before the files). */
export function ensurePythonVenvs(): void {
  ensurePythonClient();
  ensurePythonGrpc();
  ensureSchemathesis();
  ensureOpenApiPythonClient();
  ensureStandardWebhooks();
}

/**
 * Runs a Python program with `input` on its stdin and answers its stdout, trimmed, without blocking
 * the event loop: a test's own API server and receivers live in the test's process, and a loop held
 * by a synchronous child lets a keep-alive socket time out under a request already written to it.
 */
export async function runPython(python: string, args: string[], input: string | Buffer): Promise<string> {
  const child = spawn(python, args, { stdio: ["pipe", "pipe", "pipe"] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
  child.stdin.end(input);
  const [code] = (await once(child, "close")) as [number | null];
  if (code !== 0) throw new Error(`${python} exited ${code}: ${Buffer.concat(err).toString("utf8")}`);
  return Buffer.concat(out).toString("utf8").trim();
}
