import { describe, expect, it } from "vitest";
import { installRoot } from "../../harness/host/file-plan.ts";
import { PathMap } from "../../harness/host/path-map.ts";

describe("PathMap", () => {
  it("sees a checkout at /work/project and other folders at /work/host/<path>, binding only the outermost", () => {
    const m = new PathMap("/nonexistent/repo", ["/nonexistent/app/scenarios", "/nonexistent/app", "/nonexistent/repo/harness", "/nonexistent/app/scenarios/reports"]);
    expect(m.binds).toEqual([{ host: "/nonexistent/app", inside: "/work/host/nonexistent/app" }]);
    expect(m.inside("/nonexistent/repo/dist/harness/scenario/driver.js")).toBe("/work/project/dist/harness/scenario/driver.js");
    expect(m.inside("/nonexistent/app/scenarios/my-bug.ts")).toBe("/work/host/nonexistent/app/scenarios/my-bug.ts");
    expect(() => m.inside("/nonexistent/elsewhere/x.ts")).toThrow(/\/nonexistent\/elsewhere\/x\.ts is in no folder bound/);
  });

  it("sees an installed package through the project that holds it, beside its hoisted dependencies", () => {
    const pkg = "/nonexistent/app/node_modules/outlive";
    expect(installRoot(pkg)).toBe("/nonexistent/app");
    expect(installRoot("/nonexistent/repo")).toBeNull();
    const m = new PathMap(pkg, ["/nonexistent/app"]);
    expect(m.inside(`${pkg}/dist/harness/scenario/driver.js`)).toBe("/work/host/nonexistent/app/node_modules/outlive/dist/harness/scenario/driver.js");
    expect(m.inside("/nonexistent/app/node_modules/zx/package.json")).toBe("/work/host/nonexistent/app/node_modules/zx/package.json");
  });
});
