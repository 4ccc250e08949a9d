import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * D2: gen/ is committed and `buf generate` reproduces it byte for byte. This regenerates into a
 * temporary directory and lists every file of gen/ that differs, is missing or should not be there.
 */
const repositoryRoot = resolve(fileURLToPath(import.meta.url), "../..");

/** Runs buf.gen.yaml of `cwd` with its `out` directories under `outputDir`. */
export function runBufGenerate(cwd: string, outputDir: string): void {
  const bin = join(repositoryRoot, "node_modules", ".bin");
  // Local plugins (protoc-gen-es) are found on PATH, as npm scripts would find them.
  const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` };
  const result = spawnSync(join(bin, "buf"), ["generate", "--output", outputDir], {
    cwd,
    env,
    encoding: "utf8",
  });
  if (result.status !== 0) {
    throw new Error(`buf generate failed in ${cwd}:\n${result.stderr || result.error?.message}`);
  }
}

/** Files of gen/ that regeneration would change, as `<path>: <how>`; empty when gen/ is current. */
export function generatedDrift(root = repositoryRoot): string[] {
  const outputDir = mkdtempSync(join(tmpdir(), "flowlog-generate-"));
  try {
    runBufGenerate(root, outputDir);
    return compareTrees(join(root, "gen"), join(outputDir, "gen"));
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
}

function compareTrees(committed: string, generated: string): string[] {
  const committedFiles = new Set(listFiles(committed));
  const generatedFiles = new Set(listFiles(generated));
  const drift: string[] = [];
  for (const file of [...new Set([...committedFiles, ...generatedFiles])].sort()) {
    if (!generatedFiles.has(file)) drift.push(`gen/${file}: not generated any more`);
    else if (!committedFiles.has(file)) drift.push(`gen/${file}: generated but not in gen/`);
    else if (!readFileSync(join(committed, file)).equals(readFileSync(join(generated, file)))) {
      drift.push(`gen/${file}: differs from what buf generate writes`);
    }
  }
  return drift;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

function main(): void {
  const drift = generatedDrift();
  if (drift.length === 0) {
    console.log("gen/ is exactly what buf generate produces");
    return;
  }
  console.error(`gen/ has drifted; run npx buf generate and commit the result:\n${drift.join("\n")}`);
  process.exitCode = 1;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
