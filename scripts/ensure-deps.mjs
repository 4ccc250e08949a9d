// Runs before `npm start` and `npm test` so that the README's two commands are the whole
// set-up on a fresh clone: installs the locked npm packages when they are missing or older
// than package-lock.json or a patch in patches/ (applied by patch-package after every install). Plain Node,
// no dependencies: it runs before any are installed.
import { execSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";

const installed = "node_modules/.package-lock.json";
const inputs = ["package-lock.json", ...readdirSync("patches").map((name) => `patches/${name}`)];
const stale =
  !existsSync(installed) || inputs.some((file) => statSync(file).mtimeMs > statSync(installed).mtimeMs);
if (stale) {
  // `npm install` rather than `npm ci`: it installs the locked versions all the same, and it accepts a
  // lock file that records only the platform builds a registry mirror serves (npm ci refuses those).
  console.error("Installing npm packages (npm install)...");
  execSync("npm install --no-audit --no-fund", { stdio: "inherit" });
}
