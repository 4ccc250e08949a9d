import { readFileSync } from "node:fs";
import { repoPath } from "../util/repo-root.js";

/** Path of the OpenAPI 3.1 document that `npm run generate` writes from the protos (D2). */
export const openApiDocumentPath = repoPath("gen", "openapi", "flowlog.openapi.json");

/** The document's bytes, read once: it changes only with a new build. */
export function loadOpenApiDocument(): Buffer {
  return readFileSync(openApiDocumentPath);
}
