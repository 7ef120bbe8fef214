import { describe, expect, it } from "vitest";
import { checkForeignModule } from "../../harness/inside/daemon/foreign-spec.ts";

describe("checkForeignModule", () => {
  it("fills the defaults: up once spawned, no drain notice", () => {
    expect(checkForeignModule({ argv: ["my-sup"] })).toEqual({ argv: ["my-sup"], ready: { none: true }, drain: { none: true } });
  });

  it("names the option, the value and its type for each mistake", () => {
    expect(() => checkForeignModule({ argv: [] })).toThrow("Expected the `module.argv` option to be a non-empty array of strings, got `[]` (object)");
    expect(() => checkForeignModule({ argv: ["x"], cwd: "rel" })).toThrow("Expected the `module.cwd` option to be an absolute path, got `\"rel\"` (string)");
    expect(() => checkForeignModule({ argv: ["x"], ready: { port: 80 } as never })).toThrow(/`module.ready` option to be one of \{ stdout \}/);
    expect(() => checkForeignModule({ argv: ["x"], drain: { stdin: "q", signal: "SIGTERM" } as never })).toThrow(/`module.drain` option/);
    expect(() => checkForeignModule({ argv: ["x"], drain: { signal: "SIGTERM", waitMs: -1 } })).toThrow("Expected the `module.drain.waitMs` option to be a positive integer, got `-1` (number)");
    expect(() => checkForeignModule({ argv: ["x"], readyTimeoutMs: 0 })).toThrow(/`module.readyTimeoutMs`/);
  });
});
