#!/usr/bin/env node
// flowlog runs compiled JavaScript from dist/js/ (issue 50). A source newer than the last build rebuilds it
// first (scripts/build.mjs, a few seconds), so a changed checkout never runs stale code; otherwise this
// costs a look at the files' dates. Stack traces name the TypeScript sources.
import { ensureBuilt } from "../scripts/build.mjs";

await ensureBuilt();
process.setSourceMapsEnabled(true);
await import("../dist/js/src/cli/main.js");
