/** Builds dist/js/ unless it is newer than every input (scripts/build.mjs). */
export function ensureBuilt(): Promise<void>;
/** The workflows' bundle the build makes, for workers running the sources (tests). */
export const workflowBundlePath: string;
