import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TRIM_SCRIPT } from "../../lib/output/mod.ts";
import { wrapperArgv } from "../../lib/spawn/wrapper.ts";
import { groupHasAnyMember } from "../support/group.ts";
import { waitFor } from "../support/wait.ts";

/** Runs the wrapper as the leader of its own group, resolves once it is reaped. */
function run(argv: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ["ignore", "ignore", "inherit", "pipe"] });
    child.once("error", reject);
    child.once("close", () => resolve(child.pid!));
  });
}

describe("the output trimmer beside the command", () => {
  it("leaves not even a zombie in the task's group when the command ends at once or soon (60 runs)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "outlive-trim-"));
    const lingering: string[] = [];
    try {
      // At once, after a few ms (TERM lands in the trimmer's first sleep or its first checks), and after its first check.
      for (const shell of ["exit 0", "echo hi; sleep 0.01", "echo hi; sleep 0.15"]) {
        for (let i = 0; i < 20; i++) {
          const argv = wrapperArgv({
            command: { shell },
            enterCgroupProcs: null,
            deadlineSeconds: 0,
            graceMs: 100,
            timedOutFile: join(dir, "timed-out"),
            trim: { script: TRIM_SCRIPT, maxBytes: 4096 },
          });
          const pid = await run(argv);
          // Asked at once, as the supervisor does on the exit event: an orphaned sleep would still be here.
          if (groupHasAnyMember(pid)) lingering.push(`${shell} (run ${i})`);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(lingering).toEqual([]);
  });

  it("keeps trimming one stream when the other's file is gone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "outlive-trim-one-"));
    try {
      writeFileSync(join(dir, "stdout"), Buffer.alloc(200_000, 0x61));
      // The command ends once the head is dropped; the warden's look when it ends is the last.
      const argv = wrapperArgv({
        command: { shell: `n=0; while [ ! -e ${dir}/stdout.dropped ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done` },
        enterCgroupProcs: null,
        deadlineSeconds: 0,
        graceMs: 100,
        timedOutFile: join(dir, "timed-out"),
        trim: { script: TRIM_SCRIPT, maxBytes: 8192 },
      });
      await run(argv);
      expect(existsSync(join(dir, "stderr"))).toBe(false);
      expect(Number(readFileSync(join(dir, "stdout.dropped"), "utf8"))).toBe(Math.floor((200_000 - 8192) / 4096) * 4096);
      expect(statSync(join(dir, "stdout")).blocks * 512).toBeLessThanOrEqual(8192 + 2 * 4096);
      expect(statSync(join(dir, "stdout")).size).toBe(200_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
