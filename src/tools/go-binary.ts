import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { repoPath } from "../util/repo-root.js";
import { executableSuffix, findOnPath, isExecutable, run } from "./executables.js";

/** A command-line tool that is built from a Go module when it is not installed. */
export interface GoBinary {
  /** The command's name, on PATH and in the cache. */
  name: string;
  /** The `go install` package path. */
  module: string;
  /** The name `go install` gives the binary (the package path's last element) when it is not `name`. */
  builtAs?: string;
  /**
   * The path of the module `module` is in, when `go install` refuses it because its go.mod has replace
   * directives (Jaeger's): the tool is then built with `go build` in the module's own directory of the
   * module cache, where its go.mod, replaces included, is the main module's.
   */
  moduleRoot?: string;
  version: string;
  /** What to do instead when Go is missing, for the error message. */
  withoutGo: string;
  /** How long a first build takes here, for the progress message. */
  buildTime: string;
}

/** Git-ignored, so a clone builds each tool once and keeps it across `npm start` and `npm test`. */
export const toolsBinDir = repoPath(".tools", "bin");

export class GoBinaryUnavailableError extends Error {
  constructor(tool: GoBinary) {
    super(`${tool.name} is not on PATH and Go is not installed to build it. ${tool.withoutGo}`);
    this.name = "GoBinaryUnavailableError";
  }
}

/** Path of the tool: the one on PATH, else our cached build, else a fresh `go install` of the pinned version. */
export async function resolveGoBinary(tool: GoBinary): Promise<string> {
  const cached = path.join(toolsBinDir, tool.name + executableSuffix);
  return (
    (await findOnPath(tool.name)) ??
    ((await isExecutable(cached)) ? cached : buildGoBinary(tool, toolsBinDir))
  );
}

/**
 * Builds the tool with `go install` into `binDir`. Go writes into a private temporary directory and the
 * finished binary is renamed into place, so concurrent builders (two test runs, `npm start` beside
 * `npm test`) never expose a half-written file: rename is atomic and the last one wins.
 */
export async function buildGoBinary(tool: GoBinary, binDir: string): Promise<string> {
  const go = await findOnPath("go");
  if (!go) throw new GoBinaryUnavailableError(tool);
  await mkdir(binDir, { recursive: true });
  const buildDir = await mkdtemp(path.join(binDir, ".build-"));
  try {
    console.error(
      `Building ${tool.name} ${tool.version} into ${binDir} with go ${tool.moduleRoot ? "build" : "install"} (first time only, ${tool.buildTime})...`,
    );
    const built = path.join(buildDir, (tool.builtAs ?? tool.name) + executableSuffix);
    if (tool.moduleRoot === undefined) {
      await run(go, ["install", `${tool.module}@${tool.version}`], { ...process.env, GOBIN: buildDir });
    } else {
      await buildInModule(go, { ...tool, moduleRoot: tool.moduleRoot }, built);
    }
    const target = path.join(binDir, tool.name + executableSuffix);
    await rename(built, target);
    return target;
  } finally {
    await rm(buildDir, { recursive: true, force: true });
  }
}

/** `go build` of the tool's package in its module's directory, downloaded to the module cache first. */
async function buildInModule(
  go: string,
  tool: GoBinary & { moduleRoot: string },
  output: string,
): Promise<void> {
  const { stdout } = await promisify(execFile)(
    go,
    ["mod", "download", "-json", `${tool.moduleRoot}@${tool.version}`],
    {
      maxBuffer: 1 << 20,
    },
  );
  const { Dir: moduleDir } = JSON.parse(stdout) as { Dir: string };
  const packageDir = `./${path.posix.relative(tool.moduleRoot, tool.module)}`;
  await run(go, ["build", "-o", output, packageDir], process.env, moduleDir);
}
