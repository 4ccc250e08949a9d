import { type GoBinary, resolveGoBinary } from "../tools/go-binary.js";

/**
 * The reference cluster's Temporal parts (D32, issue 16), built with `go install` from the Go module proxy
 * into the git-ignored tools folder, like the CLI. v1.29.1 is the server the CLI of D25 embeds, so one
 * module download serves both, and it has no `replace` directives.
 */
const temporalServerVersion = "v1.29.1";
const withoutGo = "Install Go (https://go.dev/dl) to build it, or put a build of it on PATH.";

export const temporalServer: GoBinary = {
  name: "temporal-server",
  builtAs: "server",
  module: "go.temporal.io/server/cmd/server",
  version: temporalServerVersion,
  withoutGo,
  buildTime: "takes 3-6 minutes",
};

/** Creates and migrates the server's persistence and visibility schemas (its schemas are built in). */
export const temporalSqlTool: GoBinary = {
  name: "temporal-sql-tool",
  builtAs: "sql",
  module: "go.temporal.io/server/cmd/tools/sql",
  version: temporalServerVersion,
  withoutGo,
  buildTime: "takes 1-2 minutes",
};

/** The Temporal Web UI, the version the CLI of D25 embeds in its dev server. */
export const temporalUiServer: GoBinary = {
  name: "temporal-ui-server",
  builtAs: "server",
  module: "github.com/temporalio/ui-server/v2/cmd/server",
  version: "v2.42.1",
  withoutGo,
  buildTime: "takes 1-2 minutes",
};

export interface TemporalBinaries {
  server: string;
  sqlTool: string;
  uiServer: string;
}

/** Each one's path, building what is missing one at a time (two cores: parallel builds only thrash). */
export async function resolveTemporalBinaries(): Promise<TemporalBinaries> {
  return {
    server: await resolveGoBinary(temporalServer),
    sqlTool: await resolveGoBinary(temporalSqlTool),
    uiServer: await resolveGoBinary(temporalUiServer),
  };
}
