import { execFile, execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clusterEnv } from "../src/cluster/cluster.js";
import { type ClusterProcess, isRunning, launch, stopProcess } from "../src/cluster/processes.js";

/**
 * Issue 49: `flowlog cluster` signals the pids its state file names, hands its processes the keys kept
 * beside it, and runs its nginx.conf as root. Each command is run here as an operator runs it, on a
 * directory a local stranger could have prepared: none of it may be believed.
 */

const repoRoot = path.resolve(import.meta.dirname, "..");
const run = promisify(execFile);
/** Another user of this machine; the tests run as root (a test of ownership needs to chown). */
const stranger = Number(execFileSync("id", ["-u", "nobody"], { encoding: "utf8" }).trim());

/** `flowlog cluster <args>` as a separate process: its exit code and what it printed. */
async function cluster(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, ["bin/flowlog.js", "cluster", ...args], {
    cwd: repoRoot,
    timeout: 60_000,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  );
}

let scratch: string;
/** A process of this machine that a planted state file names, to see whether `down` signals it. */
let victim: ClusterProcess;

beforeEach(() => {
  scratch = mkdtempSync(path.join(tmpdir(), "flowlog-cluster-dir-"));
  victim = launch(scratch, "victim", [process.execPath, ["-e", "setInterval(() => {}, 1000);"]]);
});
afterEach(async () => {
  await stopProcess(victim, 5_000);
  rmSync(scratch, { recursive: true, force: true });
});

/** A cluster directory holding a state file that names `processes`, as `up` writes it. */
function clusterDir(name: string, processes: unknown[]): string {
  const dir = path.join(scratch, name);
  mkdirSync(dir, { mode: 0o700 });
  writeState(path.join(dir, "state.json"), processes);
  return dir;
}

function writeState(file: string, processes: unknown[]): void {
  writeFileSync(file, JSON.stringify({ ports: {}, settings: {}, processes }), { mode: 0o600 });
}

describe("the cluster trusts only a directory of its own user's (issue 49)", () => {
  it("down, status, purge, up and the env file refuse a directory another user owns, and signal no pid it names", async () => {
    const dir = clusterDir("theirs", [victim]);
    chownSync(dir, stranger, stranger);
    chownSync(path.join(dir, "state.json"), stranger, stranger);
    const refusal = `refusing the cluster directory ${dir}: it belongs to uid ${stranger}, not to this user`;

    for (const command of ["down", "status", "purge"]) {
      const answer = await cluster(command, "--dir", dir);
      expect(await isRunning(victim), command).toBe(true);
      expect(answer.stderr, command).toContain(refusal);
      expect(answer.code, command).toBe(1);
    }
    expect(existsSync(path.join(dir, "state.json"))).toBe(true);
    await expect(clusterEnv(dir)).rejects.toThrow(refusal);

    const before = readdirSync(dir);
    const up = await cluster("up", "--dir", dir);
    expect(up.stderr).toContain(refusal);
    expect(up.code).toBe(1);
    // Refused before anything was made or started in it.
    expect(readdirSync(dir)).toEqual(before);
  });

  it("refuses a directory its group or others can write, and one under a directory others can write", async () => {
    const open = clusterDir("open", [victim]);
    chmodSync(open, 0o777);
    for (const command of ["down", "status", "up"]) {
      const answer = await cluster(command, "--dir", open);
      expect(answer.stderr, command).toContain(
        `refusing the cluster directory ${open}: its group or others can write it (mode 0777)`,
      );
      expect(answer.code, command).toBe(1);
    }

    // Its own mode is right, but whoever can write the directory above can put another in its place.
    const above = path.join(scratch, "shared");
    mkdirSync(above);
    chmodSync(above, 0o777);
    const inside = path.join(above, "cluster");
    mkdirSync(inside, { mode: 0o700 });
    writeState(path.join(inside, "state.json"), [victim]);
    const down = await cluster("down", "--dir", inside);
    expect(await isRunning(victim)).toBe(true);
    expect(down.stderr).toContain(
      `refusing the cluster directory ${inside}: ${above}, above it, can be written by its group or others (mode 0777)`,
    );
    expect(down.code).toBe(1);
    expect(await isRunning(victim)).toBe(true);
  });

  it("reads and writes its state through no link planted in its place", async () => {
    const dir = clusterDir("linked", []);
    // Where the link leads: a file `down` would rewrite, were it followed.
    const target = path.join(scratch, "elsewhere.json");
    writeState(target, []);
    const planted = readFileSync(target, "utf8");
    rmSync(path.join(dir, "state.json"));
    symlinkSync(target, path.join(dir, "state.json"));

    const down = await cluster("down", "--dir", dir);

    expect(readFileSync(target, "utf8")).toBe(planted);
    expect(down.stderr).toContain(`${path.join(dir, "state.json")} is a symbolic link: refused`);
    expect(down.code).toBe(1);
  });

  it("refuses a recorded pid that is not a positive whole number: 0 and -1 name process groups", async () => {
    for (const pid of [0, -1, 1.5]) {
      const dir = clusterDir(`pid${String(pid)}`, [{ ...victim, name: "postgres", pid }]);
      for (const command of ["down", "status"]) {
        const answer = await cluster(command, "--dir", dir);
        expect(answer.stderr, `${command} ${pid}`).toContain(
          `${path.join(dir, "state.json")}: postgres is recorded with pid ${JSON.stringify(pid)}, ` +
            "not a positive whole number: refusing to signal it",
        );
        expect(answer.code, `${command} ${pid}`).toBe(1);
      }
    }
    expect(await isRunning(victim)).toBe(true);
  });
});
