// TaskWatch puts a check off while the task's own process is a zombie not yet
// reaped (its group would still "exist" and cost a scan of /proc), and runs it
// at the exit event, or once the bound has passed.
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { UNREAPED_CHILD } from "../../harness/inside/kits/unreaped-child.ts";
import { readProcStat } from "../../lib/internal.ts";
import { TaskWatch } from "../../lib/observe/task-watch.ts";
import { ProcessGroupPlacement } from "../../lib/placement/process-group/process-group.ts";
import type { TaskRecord } from "../../lib/store/record/record.ts";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/**
 * A real zombie: `sh` starts a child that ends after the exec, prints its
 * pid, and execs into a sleep that never reaps it. Node cannot hold its own
 * child unreaped, so this one stands in for the wrapper in the moment before
 * the exit event.
 */
async function realZombie(): Promise<{ pid: number; holder: ChildProcess }> {
  const holder = spawn("sh", ["-c", `${UNREAPED_CHILD}\necho $!\nexec sleep 30`], { stdio: ["ignore", "pipe", "ignore"] });
  cleanups.push(() => holder.kill("SIGKILL"));
  const pid = await new Promise<number>((resolve) => holder.stdout!.once("data", (d) => resolve(Number(String(d).trim()))));
  for (let i = 0; i < 200 && readProcStat(pid)?.state !== "Z"; i++) await new Promise((r) => setTimeout(r, 10));
  expect(readProcStat(pid)?.state).toBe("Z");
  return { pid, holder };
}

/** The part of a ChildProcess TaskWatch reads, for a process node did not spawn. */
function childFor(pid: number) {
  return Object.assign(new EventEmitter(), { pid, exitCode: null as number | null, signalCode: null as string | null });
}

function watch(child: ReturnType<typeof childFor>, reapWaitMs: number, checks: number[]) {
  const io = mkdtempSync(join(tmpdir(), "outlive-watch-"));
  const record = { id: "t-0000000000000001", deadlineAt: new Date(Date.now() + 3_600_000).toISOString() } as TaskRecord;
  const w = new TaskWatch({
    record,
    ioDir: io,
    placement: new ProcessGroupPlacement(),
    child: child as unknown as ChildProcess,
    livenessIntervalMs: 3_600_000,
    reapWaitMs,
    check: async () => void checks.push(Date.now()),
    onDeadline: () => {},
  });
  cleanups.push(() => {
    w.stop();
    rmSync(io, { recursive: true, force: true });
  });
  return w;
}

it("puts the check off while its own process is an unreaped zombie, and runs it at the exit event", async () => {
  const { pid } = await realZombie();
  const child = childFor(pid);
  const checks: number[] = [];
  const w = watch(child, 60_000, checks);
  w.wake();
  await w.idle();
  expect(checks).toEqual([]);
  child.exitCode = 0;
  child.emit("exit", 0, null);
  await w.idle();
  expect(checks).toHaveLength(1);
});

it("runs the check anyway once the bound has passed", async () => {
  const { pid } = await realZombie();
  const checks: number[] = [];
  const w = watch(childFor(pid), 100, checks);
  expect(checks).toEqual([]);
  await new Promise((r) => setTimeout(r, 150));
  w.wake();
  await w.idle();
  expect(checks).toHaveLength(1);
});

it("checks at once when its process is alive, not a zombie", async () => {
  const live = spawn("sleep", ["30"], { stdio: "ignore" });
  cleanups.push(() => live.kill("SIGKILL"));
  const checks: number[] = [];
  const w = watch(childFor(live.pid!), 60_000, checks);
  await w.idle();
  expect(checks).toHaveLength(1);
});
