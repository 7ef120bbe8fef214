import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TRIM_SCRIPT } from "../../lib/output/mod.ts";
import { wrapperArgv } from "../../lib/spawn/wrapper.ts";
import { groupHasAnyMember } from "../support/group.ts";

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
});
