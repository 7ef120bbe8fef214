import { describe, expect, it } from "vitest";
import { parseCutSpec } from "../../lib/store/write/cut-seam.ts";

describe("the power-cut debug seam's variable", () => {
  it("is off unless set and well formed", () => {
    expect(parseCutSpec(undefined)).toBeNull();
    expect(parseCutSpec("")).toBeNull();
    expect(parseCutSpec("ack:0:/tmp/x")).toBeNull();
    expect(parseCutSpec("flush:1:/tmp/x")).toBeNull();
    expect(parseCutSpec("ack:2:relative")).toBeNull();
  });
  it("names a kind, a count and an absolute file", () => {
    expect(parseCutSpec("ack:2:/run/dir/cut-seam-3")).toEqual({ kind: "ack", k: 2, file: "/run/dir/cut-seam-3" });
  });
});
