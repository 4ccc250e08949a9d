import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildGoBinary, type GoBinary } from "../src/tools/go-binary.js";

/**
 * `npm run generate`: gen/ from buf.gen.yaml, then the client packages of clients/ from buf.gen.clients.yaml
 * (issue 55, D49). The clients' generators are not npm packages, so this installs them first when missing,
 * pinned, into the git-ignored .tools/: a fresh clone needs Go and python3, as the test suite does.
 */
const repositoryRoot = resolve(fileURLToPath(import.meta.url), "../..");

/** The templates, in order, and the directories each writes (the ones check-generated compares). */
export const templates = [
  { file: "buf.gen.yaml", outputs: ["gen"] },
  {
    file: "buf.gen.clients.yaml",
    outputs: ["clients/typescript/src/gen", "clients/python/generated", "clients/go/gen"],
  },
] as const;

/** The Go plugins buf.gen.clients.yaml runs from .tools/codegen/, built from the Go module proxy. */
const goPlugins: GoBinary[] = [
  {
    name: "protoc-gen-go",
    module: "google.golang.org/protobuf/cmd/protoc-gen-go",
    version: "v1.36.12",
    withoutGo: "Install Go to generate the Go client.",
    buildTime: "under a minute",
  },
  {
    name: "protoc-gen-connect-go",
    module: "connectrpc.com/connect/cmd/protoc-gen-connect-go",
    version: "v1.19.1",
    withoutGo: "Install Go to generate the Go client.",
    buildTime: "under a minute",
  },
];

const codegenDir = join(repositoryRoot, ".tools", "codegen");
const pythonRequirements = join(repositoryRoot, "scripts", "codegen-requirements.txt");

/**
 * Builds what buf.gen.clients.yaml runs and is missing or of another version: the Go plugins, and a venv with
 * grpcio-tools, whose bundled protoc has the python and pyi generators and grpcio's grpc_python built in.
 * The versions are part of the output (each generated file names them), so a plugin on PATH is not used.
 */
export async function ensureCodegenTools(): Promise<void> {
  for (const plugin of goPlugins) {
    const stamp = join(codegenDir, `${plugin.name}.version`);
    const current = existsSync(stamp) ? readFileSync(stamp, "utf8") : "";
    if (current === plugin.version && existsSync(join(codegenDir, plugin.name))) continue;
    await buildGoBinary(plugin, codegenDir);
    writeFileSync(stamp, plugin.version);
  }
  // .tools by its real path: a worktree's is a symlink to the main checkout's, whose venv it shares, and
  // one made through the link would name the worktree's path in its scripts and in its marker below.
  mkdirSync(join(repositoryRoot, ".tools"), { recursive: true });
  const pythonVenv = join(realpathSync(join(repositoryRoot, ".tools")), "python-codegen");
  const python = join(pythonVenv, "bin", "python");
  const marker = join(pythonVenv, "requirements.sha256");
  // The venv's own path too: its scripts name the python they were installed with, by that path.
  const wanted = createHash("sha256")
    .update(pythonVenv)
    .update(readFileSync(pythonRequirements))
    .digest("hex");
  if (existsSync(python) && existsSync(marker) && readFileSync(marker, "utf8") === wanted) return;
  console.error(`Installing grpcio-tools into ${pythonVenv} (first time only)...`);
  rmSync(pythonVenv, { recursive: true, force: true });
  execFileSync("python3", ["-m", "venv", pythonVenv], { stdio: "inherit" });
  execFileSync(
    python,
    ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", pythonRequirements],
    { stdio: "inherit" },
  );
  writeFileSync(marker, wanted);
}

/** Runs every template with its `out` directories under `outputDir`, or in place when it is not given. */
export async function generate(outputDir?: string): Promise<void> {
  await ensureCodegenTools();
  const bin = join(repositoryRoot, "node_modules", ".bin");
  // Local plugins (protoc-gen-es) are found on PATH, as npm scripts would find them.
  const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` };
  for (const template of templates) {
    const args = ["generate", "--template", template.file, ...(outputDir ? ["--output", outputDir] : [])];
    const result = spawnSync(join(bin, "buf"), args, { cwd: repositoryRoot, env, encoding: "utf8" });
    if (result.status !== 0) {
      throw new Error(`buf ${args.join(" ")} failed:\n${result.stderr || result.error?.message}`);
    }
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await generate();
}
