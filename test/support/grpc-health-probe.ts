import { type GoBinary, resolveGoBinary } from "../../src/tools/go-binary.js";

/** grpc-health-probe, the probe Kubernetes users run against a gRPC server's health service (issue 55). */
export const grpcHealthProbe: GoBinary = {
  name: "grpc-health-probe",
  module: "github.com/grpc-ecosystem/grpc-health-probe",
  version: "v0.4.62",
  withoutGo: "Install grpc-health-probe, or Go to let the tests build it.",
  buildTime: "about a minute",
};

export function resolveGrpcHealthProbe(): Promise<string> {
  return resolveGoBinary(grpcHealthProbe);
}
