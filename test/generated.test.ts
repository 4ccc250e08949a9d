import { describe, expect, it } from "vitest";
import { generatedDrift } from "../scripts/check-generated.js";

describe("generated code (D2)", () => {
  it("gen/ is exactly what npm run generate produces", () => {
    expect(generatedDrift()).toEqual([]);
  });
});
