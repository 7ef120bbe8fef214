import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, tempDir } from "../support/cli.ts";

// `--storage st` as a user types it: relative to the shell's directory, while the task runs somewhere else
// (--cwd). The shim and the shell wrapper are handed the task's file names, and run in the task's cwd; a
// relative name would have named other files (the shim refused it, and the task read as lost).
const { dir, remove } = tempDir("outlive-relative-storage-");
afterAll(remove);

function outlive(cwd: string, env: Record<string, string>, ...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: "utf8", timeout: 60_000, env: { ...process.env, ...env } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("a storage named relative to the shell's directory", () => {
  for (const [program, env] of [["the shim", {}], ["the shell wrapper", { OUTLIVE_SHIM: "none" }]] as const) {
    it(`holds the task's real end under ${program}, its cwd elsewhere`, () => {
      const shell = join(dir, program.replace(/ /g, "-"));
      const elsewhere = join(shell, "elsewhere");
      mkdirSync(elsewhere, { recursive: true });
      const started = outlive(shell, env, "run", "--storage", "st", "--cwd", elsewhere, "--timeout", "60", "--", "sh", "-c", "echo here; exit 3");
      expect(started.err).toBe("");
      expect(started.code).toBe(0);
      const id = started.out.trim();
      const waited = outlive(shell, env, "wait", "--storage", "st", id);
      expect(waited.code).toBe(3);
      expect(waited.out).toMatch(/exited with code 3/);
      // The task's files are where the storage is, none in the task's cwd.
      expect(existsSync(join(shell, "st", "tasks", id, "io", "ended"))).toBe(true);
      expect(readdirSync(elsewhere)).toEqual([]);
    });
  }
});
