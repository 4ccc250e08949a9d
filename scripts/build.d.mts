/** Builds dist/js/ unless it is newer than every input (scripts/build.mjs). */
export function ensureBuilt(): Promise<void>;
