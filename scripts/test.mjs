// `npm test` after the set-up: the static checks (`npm run check`: Biome, tsc, ESLint, buf lint,
// dependency-cruiser) and the suite (`vitest run`) side by side, and fails if either fails. The suite mostly
// waits on the real servers it starts, so the checks' minute or so of CPU fits in its idle time instead of
// coming before it (issue 50). The checks' output is printed in one piece when they end; vitest's as it runs.
// Arguments go to vitest (`npm test -- test/logs-api.test.ts`).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const vitest = fileURLToPath(new URL("../node_modules/vitest/vitest.mjs", import.meta.url));

const started = Date.now();
const check = spawn("npm", ["run", "--silent", "check"], { stdio: ["ignore", "pipe", "pipe"] });
let checkOutput = "";
check.stdout.setEncoding("utf8").on("data", (text) => (checkOutput += text));
check.stderr.setEncoding("utf8").on("data", (text) => (checkOutput += text));
const checked = new Promise((resolve) =>
  check.on("close", (code) => {
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    if (code === 0) console.log(`\nnpm run check passed in ${seconds} s.\n`);
    else console.log(`\nnpm run check FAILED (exit ${code}) in ${seconds} s:\n${checkOutput}\n`);
    resolve(code);
  }),
);

const suite = spawn(process.execPath, [vitest, "run", ...process.argv.slice(2)], { stdio: "inherit" });
const tested = new Promise((resolve) => suite.on("close", (code) => resolve(code)));

const [checkCode, suiteCode] = await Promise.all([checked, tested]);
if (checkCode !== 0) console.log("npm run check failed: see its output above.");
process.exit(checkCode !== 0 || suiteCode !== 0 ? 1 : 0);
