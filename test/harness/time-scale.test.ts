import { describe, expect, it } from "vitest";
import { TIME_SCALE_PARAM, timeScaleOf } from "../../harness/shared/time-scale.ts";

describe("the time scale a host passes to a scenario", () => {
  it("is 1 when the host passes none, else the number given", () => {
    expect(timeScaleOf({})).toBe(1);
    expect(timeScaleOf({ [TIME_SCALE_PARAM]: "5" })).toBe(5);
    expect(timeScaleOf({ [TIME_SCALE_PARAM]: "2.5" })).toBe(2.5);
  });

  it.each(["", " ", "fast", "0", "0.5", "-3", "51", "NaN", "Infinity"])("refuses %j in one line naming the param", (raw) => {
    expect(() => timeScaleOf({ [TIME_SCALE_PARAM]: raw })).toThrow(`Expected the \`timeScale\` param to be a number from 1 to 50, got ${JSON.stringify(raw)}`);
  });
});
