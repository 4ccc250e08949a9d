#!/usr/bin/env node
// flowlog runs from its TypeScript sources: tsx compiles them on load, so the generated code
// in gen/ and src/ are what runs, with no build step to forget.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
