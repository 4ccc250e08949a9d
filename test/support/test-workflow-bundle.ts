import { mkdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { bundleWorkflowCode, DefaultLogger } from "@temporalio/worker";
import { workflowBundlePath } from "../../scripts/build.mjs";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const interceptorsPath = fileURLToPath(new URL("./test-workflow-interceptors.ts", import.meta.url));
const workflowsPath = path.join(repoRoot, "dist", "js", "src", "temporal", "workflows", "index.js");

/**
 * The workflows the build compiled (dist/js), bundled with the tests' interceptors (shorter heartbeat
 * timeouts, test-workflow-interceptors.ts): what the workers a test starts run, in its process or in one of
 * their own (engine.ts, engine-worker-process.ts).
 */
export const testWorkflowBundlePath = path.join(repoRoot, "dist", "test", "workflow-bundle.js");

/** Bundles it unless it is newer than the build's own bundle and the interceptors (global set-up). */
export async function ensureTestWorkflowBundle(): Promise<void> {
  const built = statSync(testWorkflowBundlePath, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const inputs = [workflowBundlePath, interceptorsPath].map((input) => statSync(input).mtimeMs);
  if (inputs.every((changed) => changed < built)) return;
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: [interceptorsPath],
    logger: new DefaultLogger("WARN"),
  });
  // Written whole, then renamed into place: a run starting beside this one reads the old bundle or the new.
  mkdirSync(path.dirname(testWorkflowBundlePath), { recursive: true });
  const next = `${testWorkflowBundlePath}.${process.pid}`;
  writeFileSync(next, code);
  renameSync(next, testWorkflowBundlePath);
}
