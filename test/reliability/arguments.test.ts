// Arguments reach the command byte for byte, in every placement this machine supports.
import fc from "fast-check";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CgroupV2Placement, OutliveError, Supervisor } from "../../lib/internal.ts";
import { removePlacementBase } from "../support/cgroup-base.ts";
import { makeStorage, quietLog, removeAll } from "./support/hostile-storage.ts";

const PREFIX = "outlive-test-args";
const cgroupProbe = await new CgroupV2Placement({ prefix: PREFIX }).probe();
if (!cgroupProbe.ok) console.log(`arguments: cgroup-v2 skipped: ${cgroupProbe.reason}`);
console.log("arguments: systemd-scope skipped: PID 1 is not systemd here, so no transient scope can be made");
const placements = ["process-group", ...(cgroupProbe.ok ? (["cgroup-v2"] as const) : [])] as const;

const special = fc.constantFrom("$", "${HOME}", "$$", "$(id)", "`id`", "'", '"', "\\", "\\\\'", "\n", "\r\n", "-", "--", "-e", "-n", "--help", "%s", "%%", " ", "\t", "*", "~", "é", "✓", "😀", "\u202e", "\uFEFF");
const arg = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.array(fc.oneof(special, fc.string({ unit: "binary-ascii", maxLength: 4 })), { maxLength: 6 }).map((parts) => parts.join("")),
  special,
).filter((s) => !s.includes("\0"));
const args = fc.array(arg, { minLength: 1, maxLength: 6 });

/** A shell word that is exactly `s`: single quotes, with each ' as '\''. */
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const PRINT_ARGS = 'for a; do printf "%s\\0" "$a"; done';

const temps: string[] = [];
afterAll(async () => {
  removeAll(...temps);
  await removePlacementBase(cgroupProbe.ok ? String(cgroupProbe.details.baseDir) : null);
});

describe.each(placements)("arguments round-trip (%s)", (placement) => {
  async function withSupervisor(fn: (sup: Supervisor, storage: string) => Promise<void>) {
    const storage = makeStorage("args");
    temps.push(storage);
    const sup = await Supervisor.open({ storage, mode: "daemon", placement, prefix: PREFIX, log: quietLog });
    try {
      await fn(sup, storage);
    } finally {
      await sup.stopAll().catch(() => {});
      await sup.close();
    }
  }
  const stdout = (storage: string, id: string) => readFileSync(join(storage, "tasks", id, "io", "stdout"));
  const expected = (xs: string[]) => Buffer.concat(xs.map((x) => Buffer.from(`${x}\0`, "utf8")));

  it("as argv", async () => {
    await withSupervisor(async (sup, storage) => {
      await fc.assert(
        fc.asyncProperty(args, async (xs) => {
          const task = await sup.run({ argv: ["/bin/sh", "-c", PRINT_ARGS, "sh", ...xs] });
          expect(task.command).toEqual({ argv: ["/bin/sh", "-c", PRINT_ARGS, "sh", ...xs] });
          const done = await sup.wait(task.id);
          expect(done, `${done.reason} / ${done.outputTail}`).toMatchObject({ state: "exited", exitCode: 0 });
          expect(stdout(storage, task.id)).toEqual(expected(xs));
          await sup.ack(task.id);
        }),
        { numRuns: 30 },
      );
    });
  });

  it("as a shell string that prints them", async () => {
    await withSupervisor(async (sup, storage) => {
      await fc.assert(
        fc.asyncProperty(args, async (xs) => {
          const task = await sup.run({ shell: `printf '%s\\0' ${xs.map(quote).join(" ")}` });
          const done = await sup.wait(task.id);
          expect(done, `${done.reason} / ${done.outputTail}`).toMatchObject({ state: "exited", exitCode: 0 });
          expect(stdout(storage, task.id)).toEqual(expected(xs));
          await sup.ack(task.id);
        }),
        { numRuns: 30 },
      );
    });
  });

  // /bin/sh -c "-x…" takes the string for options; the command must run all the same.
  it("a shell string that begins with '-' runs as a command, not as options to sh", async () => {
    const bin = mkdtempSync(join(tmpdir(), "outlive-args-bin-"));
    temps.push(bin);
    writeFileSync(join(bin, "-print"), `#!/bin/sh\n${PRINT_ARGS}\n`);
    chmodSync(join(bin, "-print"), 0o755);
    await withSupervisor(async (sup, storage) => {
      for (const xs of [["a"], ["-n", "$HOME"], ["--", "x y"]]) {
        const task = await sup.run({ shell: `-print ${xs.map(quote).join(" ")}`, env: { PATH: `${bin}:${process.env.PATH}` } });
        const done = await sup.wait(task.id);
        expect(done, `${done.reason} / ${done.outputTail}`).toMatchObject({ state: "exited", exitCode: 0 });
        expect(stdout(storage, task.id)).toEqual(expected(xs));
      }
    });
  });

  it("NUL, which argv cannot carry, is refused with a clear error before anything runs", async () => {
    await withSupervisor(async (sup) => {
      for (const spec of [{ argv: ["echo", "a\0b"] }, { argv: ["ec\0ho"] }, { shell: "echo a\0b" }]) {
        const error = await sup.run(spec).then(() => null, (e) => e);
        expect(error).toBeInstanceOf(OutliveError);
        expect(error.code).toBe("E_BAD_OPTION");
        expect(error.message).toMatch(/NUL/);
      }
      expect(sup.list()).toEqual([]);
    });
  });
});
