// Preloaded into a flowlog process by NODE_OPTIONS=--require (module-cache.ts): at exit, writes the
// CommonJS modules the process loaded, one path a line, to FLOWLOG_LOADED_MODULES_FILE. Packages without an
// ESM build (OpenTelemetry's among them) are in this cache however they were imported.
const { writeFileSync } = require("node:fs");
const Module = require("node:module");

process.on("exit", () => {
  writeFileSync(process.env.FLOWLOG_LOADED_MODULES_FILE, Object.keys(Module._cache).join("\n"));
});
