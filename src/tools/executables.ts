import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { access, stat } from "node:fs/promises";
import path from "node:path";

export const executableSuffix = process.platform === "win32" ? ".exe" : "";

/** The directories of PATH, in order. */
export function pathDirs(): string[] {
  return (process.env.PATH ?? "").split(path.delimiter).filter(Boolean);
}

export async function findOnPath(command: string): Promise<string | undefined> {
  for (const dir of pathDirs()) {
    const candidate = path.join(dir, command + executableSuffix);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/** Runs a command with its output shown, for installs and builds a developer should see progress of. */
export function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  cwd?: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ["ignore", "inherit", "inherit"] });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(" ")} failed (${signal ?? `exit code ${code}`})`));
    });
  });
}
