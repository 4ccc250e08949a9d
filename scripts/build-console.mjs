// Builds the console (issue 17) from console/ into dist/console/: one script and one stylesheet, named by
// their content's hash so the server can let browsers keep them forever, and the index.html that loads
// them. `scripts/ensure-deps.mjs` runs it at install time (so `npm start` and `npm test` always serve what
// console/ holds) and nothing is fetched at run time: the server only reads this folder.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { build } from "esbuild";

const out = "dist/console";
const stamp = `${out}/.built`;
const inputs = ["console", "gen", "package-lock.json", "scripts/build-console.mjs"];

// `--if-stale` (how ensure-deps calls it): nothing to do when no input changed since the last build.
if (process.argv.includes("--if-stale") && existsSync(stamp)) {
  const built = statSync(stamp).mtimeMs;
  if (inputs.every((input) => newestChange(input) <= built)) process.exit(0);
}
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await build({
  entryPoints: { app: "console/src/main.tsx" },
  bundle: true,
  minify: true,
  sourcemap: "linked",
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  entryNames: "[name]-[hash]",
  outdir: out,
  metafile: true,
  legalComments: "linked",
  logLevel: "warning",
});

const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
const script = outputs.find((name) => name.endsWith(".js"));
const styles = outputs.find((name) => name.endsWith(".css"));
if (!script || !styles) throw new Error(`console build made no script or stylesheet: ${outputs.join(", ")}`);
const html = readFileSync("console/index.html", "utf8")
  .replace("%SCRIPT%", script)
  .replace("%STYLES%", styles);
writeFileSync(`${out}/index.html`, html);

// Compressed once here, at the highest levels, so the server only picks a file (D29 still decides when).
for (const name of readdirSync(out)) {
  const body = readFileSync(join(out, name));
  writeFileSync(
    join(out, `${name}.br`),
    brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
  );
  writeFileSync(join(out, `${name}.gz`), gzipSync(body, { level: 9 }));
}
writeFileSync(stamp, new Date().toISOString());
console.error(`Built the console into ${out}/ (${script}, ${styles}).`);

function newestChange(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce(
    (newest, name) => Math.max(newest, newestChange(join(path, name))),
    stat.mtimeMs,
  );
}
