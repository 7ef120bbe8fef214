import { describe, expect, it } from "vitest";
import { checkOutcomes, type TaskTruth } from "../../harness/inside/soak/invariants.ts";
import type { TaskRecord } from "../../lib/mod.ts";

const truth = (id: string, expectedExit: number): TaskTruth => ({
  task: { id, kind: "short", spec: { id, shell: `exit ${expectedExit}` }, expectedExit },
  acknowledgedRun: true,
  killRequested: false,
});
const ended = (id: string, exitCode: number) => ({ id, state: "exited", exitCode, reason: `exited with code ${exitCode}`, timeoutSeconds: null }) as unknown as TaskRecord;
const opts = { finalStop: true, survivingPlacement: true };

describe("soak invariants: tasks retention removed", () => {
  it("a task gone from the storage after its completion was acknowledged is checked by that completion's record", () => {
    const truths = new Map([["t-1", truth("t-1", 3)], ["t-2", truth("t-2", 4)]]);
    expect(checkOutcomes([ended("t-2", 4)], truths, opts, new Map([["t-1", ended("t-1", 3)]]))).toEqual([]);
    // The completion it was acknowledged with must have been true too.
    expect(checkOutcomes([], truths, opts, new Map([["t-1", ended("t-1", 143)], ["t-2", ended("t-2", 4)]])))
      .toEqual([expect.objectContaining({ id: "t-1", rule: "true exit code" })]);
  });

  it("a task gone with no acknowledged completion is a lost record", () => {
    const truths = new Map([["t-1", truth("t-1", 0)]]);
    expect(checkOutcomes([], truths, opts)).toEqual([expect.objectContaining({ id: "t-1", rule: "no record lost" })]);
  });
});
