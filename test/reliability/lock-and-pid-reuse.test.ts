// One supervisor per storage, a stale lock taken over only from a holder that is provably
// gone, and a reused pid never signalled nor adopted.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ModuleProcess } from "../../harness/inside/module/module-client.ts";
import { isRunning, OutliveError, readProcStat, Supervisor } from "../../lib/internal.ts";
import { acquireStorageLock } from "../../lib/store/storage/storage-lock.ts";
import { currentIncarnation } from "../../lib/store/storage/incarnation.ts";
import { pidReuseUnavailable, spawnWithPid } from "../support/pid-reuse.ts";
import { makeStorage, quietLog, removeAll } from "./support/hostile-storage.ts";

const noReuse = pidReuseUnavailable();
if (noReuse) console.log(`pid-reuse cases skipped: ${noReuse}`);

const pids: number[] = [];
const temps: string[] = [];
const modules: ModuleProcess[] = [];
afterEach(() => {
  for (const m of modules.splice(0)) m.child.kill("SIGKILL");
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  removeAll(...temps.splice(0));
});
const storage = () => {
  const s = makeStorage("lock");
  temps.push(s);
  return s;
};
const open = (s: string, extra = {}) => Supervisor.open({ storage: s, placement: "process-group", log: quietLog, ...extra });
const lockHolder = (s: string) => JSON.parse(readFileSync(join(s, "supervisor.lock"), "utf8"));

describe("the storage lock", () => {
  it("a second supervisor (another live process) is refused with E_STORAGE_LOCKED naming the holder pid", async () => {
    const s = storage();
    const holder = await ModuleProcess.start({ storage: s, placement: "process-group" });
    modules.push(holder);
    const error = await open(s).then(async (sup) => (await sup.close(), null), (e) => e);
    expect(error).toBeInstanceOf(OutliveError);
    expect(error.code).toBe("E_STORAGE_LOCKED");
    expect(error.message).toContain(`pid ${holder.child.pid}`);
    expect(error.message).toContain(s);
    expect(lockHolder(s).pid).toBe(holder.child.pid);
    expect(isRunning(holder.child.pid!)).toBe(true);
  });

  it("a holder that died is taken over", async () => {
    const s = storage();
    const holder = await ModuleProcess.start({ storage: s, placement: "process-group" });
    modules.push(holder);
    await holder.kill9();
    const sup = await open(s);
    expect(lockHolder(s).pid).toBe(process.pid);
    await sup.close();
    expect(existsSync(join(s, "supervisor.lock"))).toBe(false);
  });

  it.skipIf(noReuse !== null)("a holder whose pid now belongs to another process (another start time) is taken over; that process is untouched", async () => {
    const s = storage();
    const holder = await ModuleProcess.start({ storage: s, placement: "process-group" });
    modules.push(holder);
    const holderPid = holder.child.pid!;
    await holder.kill9();
    const stranger = await spawnWithPid(holderPid, 300);
    pids.push(stranger.pid!);
    expect(lockHolder(s).pid).toBe(stranger.pid);
    const sup = await open(s);
    expect(lockHolder(s).pid).toBe(process.pid);
    await sup.close();
    expect(isRunning(stranger.pid!)).toBe(true);
  });

  it("a holder from another boot is taken over, even with a live pid and start time; the same from this boot is refused", async () => {
    const s = storage();
    const me = currentIncarnation();
    writeFileSync(join(s, "supervisor.lock"), `${JSON.stringify({ ...me, bootId: "00000000-0000-0000-0000-000000000000" })}\n`, { mode: 0o600 });
    const sup = await open(s);
    expect(lockHolder(s).id).toBe(sup.incarnation.id);
    await sup.close();

    writeFileSync(join(s, "supervisor.lock"), `${JSON.stringify(me)}\n`, { mode: 0o600 });
    const error = await open(s).then(async (x) => (await x.close(), null), (e) => e);
    expect(error?.code).toBe("E_STORAGE_LOCKED");
    expect(error.message).toContain(`pid ${process.pid}`);
  });

  it("many contenders over one stale lock: exactly one wins, the rest are refused naming it", async () => {
    for (let round = 0; round < 20; round++) {
      const s = storage();
      const dead = spawn("true");
      await new Promise((r) => dead.once("exit", r));
      writeFileSync(join(s, "supervisor.lock"), `${JSON.stringify({ ...currentIncarnation(), pid: dead.pid, startTime: "1" })}\n`);
      // Each contender is "this process" (isRunning), so once one holds the lock every other must be refused.
      const contenders = Array.from({ length: 6 }, () => currentIncarnation());
      const results = await Promise.allSettled(contenders.map((inc) => acquireStorageLock(s, inc)));
      const won = results.filter((r) => r.status === "fulfilled").length;
      expect(won, `round ${round}: ${JSON.stringify(results.map((r) => r.status === "rejected" ? (r.reason as Error).message : "won"))}`).toBe(1);
      for (const r of results) if (r.status === "rejected") expect((r.reason as OutliveError).code).toBe("E_STORAGE_LOCKED");
      removeAll(s);
    }
  });
});

describe.skipIf(noReuse !== null)("a pid reused by an unrelated process", () => {
  /** A task started by one supervisor, SIGKILLed with no one watching, its pid given to a stranger. */
  async function reusedTask(s: string) {
    const first = await open(s);
    const task = await first.run({ id: "victim", argv: ["sleep", "60"] });
    await first.close(); // tasks run on; nobody watches
    process.kill(-task.pgid!, "SIGKILL");
    const stranger = await spawnWithPid(task.pid!, 300);
    pids.push(stranger.pid!);
    expect(readProcStat(stranger.pid!)!.startTime).not.toBe(task.startTime);
    return { task, stranger };
  }

  it("through replay: reported lost with the reason, never adopted, never signalled", async () => {
    const s = storage();
    const { stranger } = await reusedTask(s);
    const sup = await open(s);
    try {
      expect(sup.replayReport.adopted).not.toContain("victim");
      const done = sup.replayReport.finished.find((f) => f.id === "victim");
      expect(done?.state).toBe("lost");
      expect(done?.reason).toContain("pid reused");
      expect(isRunning(stranger.pid!)).toBe(true);
    } finally {
      await sup.close();
    }
    expect(isRunning(stranger.pid!)).toBe(true);
  });

  it("through kill(): an adopted task whose pid was reused since is not signalled", async () => {
    const s = storage();
    const first = await open(s);
    const task = await first.run({ id: "victim", argv: ["sleep", "60"] });
    await first.close();
    // Adopted by a supervisor that checks liveness rarely, so only kill() looks at the pid.
    const sup = await open(s, { livenessIntervalMs: 600_000 });
    try {
      expect(sup.replayReport.adopted).toEqual(["victim"]);
      process.kill(-task.pgid!, "SIGKILL");
      const stranger = await spawnWithPid(task.pid!, 300);
      pids.push(stranger.pid!);
      const result = await sup.kill("victim", { graceMs: 200 });
      expect(isRunning(stranger.pid!)).toBe(true);
      expect(result.record.state).toBe("lost");
      expect(result.record.reason).toContain("pid");
      expect(["pid-reused", "terminal"]).toContain(result.how);
    } finally {
      await sup.close();
    }
  });
});
