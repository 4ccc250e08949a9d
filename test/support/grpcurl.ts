import { type GoBinary, resolveGoBinary } from "../../src/tools/go-binary.js";

/** grpcurl, the command-line gRPC client most users reach for first, built like the Temporal CLI. */
export const grpcurl: GoBinary = {
  name: "grpcurl",
  module: "github.com/fullstorydev/grpcurl/cmd/grpcurl",
  version: "v1.9.4",
  withoutGo: "Install grpcurl, or Go to let the tests build it.",
  buildTime: "about a minute",
};

export function resolveGrpcurl(): Promise<string> {
  return resolveGoBinary(grpcurl);
}
