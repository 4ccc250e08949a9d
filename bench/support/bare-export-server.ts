import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { databaseFile } from "../../src/store/database.js";
import { bareExportPages } from "./bare-export-lines.js";

/**
 * The export bench's baseline (issue 53): a bare `node:http` server that answers any GET with the export
 * lines of one workspace as the least code writes them (bare-export-lines.ts), chunked, waiting for the
 * socket to drain as flowlog's export does, with no key, bucket, router, protobuf or view.
 *
 *     node --import tsx bench/support/bare-export-server.ts <data dir> <workspace id>
 */
const [dataDir = "", workspaceId = ""] = process.argv.slice(2);
if (!dataDir || !workspaceId) throw new Error("usage: bare-export-server.ts <data dir> <workspace id>");

const server = createServer((_req, res) => {
  void (async () => {
    res.writeHead(200, { "content-type": "application/x-ndjson" });
    for await (const page of bareExportPages(databaseFile(dataDir), { workspaceId })) {
      if (!res.write(page.text)) await once(res, "drain");
    }
    res.end();
  })().catch((error: unknown) => {
    console.error(error);
    res.destroy();
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(`bare export server on port ${(server.address() as AddressInfo).port}`);
});
