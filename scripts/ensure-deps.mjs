// Runs before `npm start` and `npm test` so that the README's two commands are the whole
// set-up on a fresh clone: installs the locked npm packages when they are missing or older
// than package-lock.json or a patch in patches/ (applied by patch-package after every install). Plain Node,
// no dependencies: it runs before any are installed.
import { execSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";

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

// buf.validate's own .proto (protovalidate, issue 14): the Go module proxy serves the protovalidate
// repository with its proto sources, so `go mod download` fetches it into Go's module cache and we copy
// the one file buf compiles against into the git-ignored tools folder. Its version follows the rules that
// @bufbuild/protovalidate, the validator the server runs, understands.
const protovalidate = { module: "github.com/bufbuild/protovalidate", version: "v1.2.2" };
const protoRoot = ".tools/proto/protovalidate";
const validateProto = `${protoRoot}/buf/validate/validate.proto`;
const stamp = `${protoRoot}/VERSION`;
if (
  !existsSync(validateProto) ||
  !existsSync(stamp) ||
  readFileSync(stamp, "utf8") !== protovalidate.version
) {
  console.error(`Fetching buf/validate/validate.proto (${protovalidate.module}@${protovalidate.version})...`);
  const download = execSync(`go mod download -json ${protovalidate.module}@${protovalidate.version}`, {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const { Dir: moduleDir } = JSON.parse(download);
  mkdirSync(`${protoRoot}/buf/validate`, { recursive: true });
  rmSync(validateProto, { force: true });
  copyFileSync(`${moduleDir}/proto/protovalidate/buf/validate/validate.proto`, validateProto);
  chmodSync(validateProto, 0o644);
  writeFileSync(stamp, protovalidate.version);
}

// The console (issue 17) is built from console/ at install time and served from dist/console/; a source
// change since the last build rebuilds it (about two seconds), anything else costs a look at the dates.
execSync("node scripts/build-console.mjs --if-stale", { stdio: "inherit" });

// flowlog itself runs compiled (issue 50): src/ and gen/ into dist/js/ when a source is newer than the last
// build. bin/flowlog.js checks the same before every start; building here keeps the first start quick.
execSync("node scripts/build.mjs --if-stale", { stdio: "inherit" });
