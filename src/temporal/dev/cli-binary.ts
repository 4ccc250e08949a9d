import { type GoBinary, resolveGoBinary } from "../../tools/go-binary.js";

/** D25: v1.5.1 is the newest CLI tag that `go install` can build (later tags carry `replace` directives). */
export const temporalCli: GoBinary = {
  name: "temporal",
  module: "github.com/temporalio/cli/cmd/temporal",
  version: "v1.5.1",
  withoutGo:
    "Install the Temporal CLI (https://docs.temporal.io/cli), or set TEMPORAL_ADDRESS to an existing " +
    "Temporal frontend (host:port) to skip the dev server.",
  buildTime: "takes 3-5 minutes",
};

/** Path of a Temporal CLI: the one on PATH, else our cached build under .tools/bin, else a fresh build. */
export function resolveTemporalCli(): Promise<string> {
  return resolveGoBinary(temporalCli);
}
