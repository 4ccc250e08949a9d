import { describe, expect, it } from "vitest";
import { generatedDrift } from "../scripts/check-generated.js";

describe("generated code (D2)", () => {
  // Seven generator runs in all (gen/'s three, then protoc-gen-es, protoc's python and pyi, grpcio's and
  // Go's two for the clients): about a minute on two busy cores.
  it("gen/ and the clients' generated code (D49) are exactly what npm run generate produces", async () => {
    expect(await generatedDrift()).toEqual([]);
  }, 300_000);
});
