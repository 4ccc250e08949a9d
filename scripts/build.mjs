// Compiles flowlog for running (issue 50): src/ and gen/ into dist/js/, one JavaScript module per TypeScript
// one (esbuild strips the types; `npm run check` is where tsc checks them), and the workflows' code bundled
// once for Temporal's sandbox (dist/js/src/temporal/workflow-bundle.js), so a worker starts without webpack.
// `bin/flowlog.js` calls `ensureBuilt()` before it starts anything: a source newer than the last build
// rebuilds (a few seconds), anything else costs a look at the dates.

import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = join(root, "dist", "js");
const stamp = join(out, ".built");
const lock = join(root, "dist", ".js-build-lock");
const sources = ["src", "gen"];
const inputs = [...sources, "package-lock.json", "scripts/build.mjs"];
/** The workflows' bundle, beside the compiled worker module that loads it. */
export const workflowBundlePath = join(out, "src", "temporal", "workflow-bundle.js");
/** A build takes seconds; a lock older than this was left by a build that died. */
const abandonedLockMs = 120_000;

/** Builds dist/js/ unless it is newer than every input; waits for a build another process runs. */
export async function ensureBuilt() {
  while (stale()) {
    if (!takeLock()) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    try {
      if (stale()) await build();
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

function stale() {
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  return inputs.some((input) => newestChange(join(root, input)) > built);
}

function takeLock() {
  mkdirSync(join(root, "dist"), { recursive: true });
  try {
    mkdirSync(lock);
    return true;
  } catch (error) {
    if (error.code !== "EEXIST") throw error;
    if (Date.now() - statSync(lock, { throwIfNoEntry: false })?.mtimeMs > abandonedLockMs) {
      rmSync(lock, { recursive: true, force: true });
    }
    return false;
  }
}

async function build() {
  const started = Date.now();
  const { build: compile } = await import("esbuild");
  const { bundleWorkflowCode } = await import("@temporalio/worker");
  // Built beside the old tree and swapped in by two renames, so a running process that loads a module
  // late (a stats thread) finds a whole tree, old or new.
  const next = `${out}.next-${process.pid}`;
  rmSync(next, { recursive: true, force: true });
  await compile({
    entryPoints: sources.flatMap((folder) => typeScriptFiles(join(root, folder))),
    outbase: root,
    outdir: next,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: true,
    logLevel: "warning",
  });
  const workflowsPath = join(next, "src", "temporal", "workflows", "index.js");
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: quietLogger });
  writeFileSync(join(next, relative(out, workflowBundlePath)), code);
  writeFileSync(join(next, ".built"), new Date().toISOString());
  const old = `${out}.old-${process.pid}`;
  if (existsSync(out)) renameSync(out, old);
  renameSync(next, out);
  rmSync(old, { recursive: true, force: true });
  console.error(`Built flowlog into dist/js/ in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
}

function typeScriptFiles(folder) {
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => join(entry.parentPath, entry.name));
}

function newestChange(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce(
    (newest, name) => Math.max(newest, newestChange(join(path, name))),
    stat.mtimeMs,
  );
}

/** The bundler's info lines (sizes) are noise at start-up; its warnings and errors are not. */
const quietLogger = {
  log: (level, message, meta) => quietLogger[level.toLowerCase()]?.(message, meta),
  trace() {},
  debug() {},
  info() {},
  warn: (message, meta) => console.error(message, meta ?? ""),
  error: (message, meta) => console.error(message, meta ?? ""),
};

// `node scripts/build.mjs` builds now; `--if-stale` (how ensure-deps calls it) only when an input changed.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!process.argv.includes("--if-stale")) rmSync(stamp, { force: true });
  await ensureBuilt();
}
