import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Path of the OpenAPI 3.1 document that `npm run generate` writes from the protos (D2). */
export const openApiDocumentPath = fileURLToPath(
  new URL("../../gen/openapi/flowlog.openapi.json", import.meta.url),
);

/** The document's bytes, read once: it changes only with a new build. */
export function loadOpenApiDocument(): Buffer {
  return readFileSync(openApiDocumentPath);
}
