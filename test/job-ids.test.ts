import { describe, expect, it } from "vitest";
import { bulkJobNumberOf, bulkJobWorkflowId } from "../src/temporal/bulk-job-ids.js";
import { recoveryNumberOf, recoveryWorkflowId } from "../src/temporal/recovery-ids.js";

/**
 * A job id a client sends back (GetRecovery, GetBulkJob, their cancels) names its owner's n-th job only
 * when written as flowlog writes it: one job, one id (D37, D47).
 */
const readers = [
  {
    kind: "a recovery job",
    id: (n: number | string) => `${recoveryWorkflowId("sub_1", 0).slice(0, -1)}${n}`,
    numberOf: (id: string) => recoveryNumberOf("sub_1", id),
    made: (n: number) => recoveryWorkflowId("sub_1", n),
    foreign: recoveryWorkflowId("sub_2", 3),
  },
  {
    kind: "a bulk job",
    id: (n: number | string) => `${bulkJobWorkflowId("retry", "ws_1", 0).slice(0, -1)}${n}`,
    numberOf: (id: string) => bulkJobNumberOf("retry", "ws_1", id),
    made: (n: number) => bulkJobWorkflowId("retry", "ws_1", n),
    foreign: bulkJobWorkflowId("cancel", "ws_1", 3),
  },
];

describe.each(readers)("the number of $kind's id", ({ id, numberOf, made, foreign }) => {
  it("reads back every id flowlog makes", () => {
    for (const n of [1, 2, 10, 999, Number.MAX_SAFE_INTEGER]) expect(numberOf(made(n))).toBe(n);
  });

  it("refuses another way of writing a number, which would name the same job twice", () => {
    for (const written of [
      "1e3",
      " 12",
      "12 ",
      "012",
      "0",
      "-1",
      "+1",
      "1.0",
      "0x10",
      "",
      "9007199254740993",
    ]) {
      expect(numberOf(id(written)), JSON.stringify(written)).toBeUndefined();
    }
  });

  it("refuses another owner's or another kind's job", () => {
    expect(numberOf(foreign)).toBeUndefined();
  });
});
