import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { generate, templates } from "./generate.js";

/**
 * D2: gen/ is committed and `buf generate` reproduces it byte for byte, and so are the client packages'
 * generated code (D49). This regenerates everything `npm run generate` writes into a temporary directory
 * and lists every generated file that differs, is missing or should not be there.
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

/** Generated files that regeneration would change, as `<path>: <how>`; empty when all are current. */
export async function generatedDrift(): Promise<string[]> {
  const outputDir = mkdtempSync(join(tmpdir(), "flowlog-generate-"));
  try {
    await generate(outputDir);
    return templates
      .flatMap((template) => template.outputs)
      .flatMap((dir) => compareTrees(dir, join(repositoryRoot, dir), join(outputDir, dir)));
  } finally {
    rmSync(outputDir, { recursive: true, force: true });
  }
}

function compareTrees(name: string, committed: string, generated: string): string[] {
  const committedFiles = new Set(listFiles(committed));
  const generatedFiles = new Set(listFiles(generated));
  const drift: string[] = [];
  for (const file of [...new Set([...committedFiles, ...generatedFiles])].sort()) {
    if (!generatedFiles.has(file)) drift.push(`${name}/${file}: not generated any more`);
    else if (!committedFiles.has(file)) drift.push(`${name}/${file}: generated but not in ${name}/`);
    else if (!readFileSync(join(committed, file)).equals(readFileSync(join(generated, file)))) {
      drift.push(`${name}/${file}: differs from what buf generate writes`);
    }
  }
  return drift;
}

/** Python's bytecode cache, written beside the client's modules when they are imported from the tree. */
const isBytecodeCache = (folder: string) => folder.split(sep).includes("__pycache__");

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !isBytecodeCache(entry.parentPath))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

async function main(): Promise<void> {
  const drift = await generatedDrift();
  if (drift.length === 0) {
    console.log("gen/ and the clients' generated code are exactly what npm run generate produces");
    return;
  }
  console.error(
    `Generated code has drifted; run npm run generate and commit the result:\n${drift.join("\n")}`,
  );
  process.exitCode = 1;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  await main();
