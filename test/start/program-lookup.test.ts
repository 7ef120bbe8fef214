import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkProgram, DEFAULT_SEARCH_PATH, lookUpProgram } from "../../lib/start/program-lookup.ts";

const dir = mkdtempSync(join(tmpdir(), "outlive-lookup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const a = join(dir, "a");
const b = join(dir, "b");
mkdirSync(a);
mkdirSync(b);
writeFileSync(join(a, "tool"), "#!/bin/sh\n", { mode: 0o644 }); // found first, but cannot run
writeFileSync(join(b, "tool"), "#!/bin/sh\n", { mode: 0o755 });
writeFileSync(join(a, "only-here"), "#!/bin/sh\n", { mode: 0o644 });
mkdirSync(join(b, "dir-named"));
symlinkSync(join(b, "tool"), join(a, "link"));

describe("lookUpProgram: as the shell that execs it", () => {
  it("takes the first executable regular file on the task's PATH, skipping one that cannot run", () => {
    expect(lookUpProgram("tool", { PATH: `${a}:${b}` }, "/")).toEqual({ ok: true, path: join(b, "tool") });
    expect(lookUpProgram("link", { PATH: a }, "/")).toEqual({ ok: true, path: join(a, "link") });
  });

  it("takes empty and relative PATH entries against the task's cwd", () => {
    expect(lookUpProgram("tool", { PATH: "b" }, dir)).toEqual({ ok: true, path: join(b, "tool") });
    expect(lookUpProgram("tool", { PATH: ":/nonexistent" }, b)).toEqual({ ok: true, path: join(b, "tool") });
  });

  it("takes a name with a slash against the cwd, never the PATH", () => {
    expect(lookUpProgram("./tool", { PATH: "/bin" }, b)).toEqual({ ok: true, path: join(b, "tool") });
    const r = lookUpProgram("./tool", { PATH: b }, "/");
    expect(r).toMatchObject({ ok: false, code: "E_NOT_FOUND" });
    expect(!r.ok && r.message).toContain("/tool (relative to the task's cwd /) does not exist");
  });

  it("says not found (127) and where it looked; the shell's default PATH when the env has none", () => {
    const r = lookUpProgram("no-such-program-x", { PATH: `${a}:${b}` }, "/tmp");
    expect(r).toMatchObject({ ok: false, code: "E_NOT_FOUND" });
    expect(!r.ok && r.message).toContain(`"no-such-program-x": not found in the task's PATH (${a}:${b}; cwd /tmp)`);
    const d = lookUpProgram("no-such-program-x", {}, "/");
    expect(!d.ok && d.message).toContain(DEFAULT_SEARCH_PATH);
    expect(!d.ok && d.message).toContain("the task's environment has none");
    expect(lookUpProgram("sh", {}, "/")).toMatchObject({ ok: true });
  });

  it("says not executable (126) for a file without x, or a directory", () => {
    // root may read anything, but still needs an x bit to exec, as the kernel does.
    expect(lookUpProgram("only-here", { PATH: a }, "/")).toMatchObject({ ok: false, code: "E_NOT_EXECUTABLE" });
    expect(lookUpProgram("dir-named", { PATH: b }, "/")).toMatchObject({ ok: false, code: "E_NOT_EXECUTABLE" });
    expect(lookUpProgram(join(a, "tool"), {}, "/")).toMatchObject({ ok: false, code: "E_NOT_EXECUTABLE" });
    chmodSync(join(a, "only-here"), 0o755);
    expect(lookUpProgram("only-here", { PATH: a }, "/")).toMatchObject({ ok: true });
    chmodSync(join(a, "only-here"), 0o644);
  });

  it("checkProgram throws the code with a message a person can act on", () => {
    expect(() => checkProgram(["/no/such/binary"], {}, "/")).toThrow(expect.objectContaining({
      code: "E_NOT_FOUND",
      message: 'Cannot run "/no/such/binary": /no/such/binary does not exist; nothing was started or stored',
    }));
  });
});
