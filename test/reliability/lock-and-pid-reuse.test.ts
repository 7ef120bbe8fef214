// One supervisor per storage, a stale lock taken over only from a holder that is provably
// gone, and a reused pid never signalled nor adopted.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ModuleLaunch, ModuleProcess } from "../../harness/inside/module/module-client.ts";
import { isRunning, OutliveError, Supervisor } from "../../lib/internal.ts";
import { acquireStorageLock } from "../../lib/store/storage/storage-lock.ts";
import { currentIncarnation } from "../../lib/store/storage/incarnation.ts";
import { PidNamespace, pidNamespaceUnavailable } from "../support/pid-namespace.ts";
import { makeStorage, quietLog, removeAll } from "./support/hostile-storage.ts";

const noReuse = pidNamespaceUnavailable();
if (noReuse) console.log(`pid-reuse cases skipped: ${noReuse}`);

const pids: number[] = [];
const temps: string[] = [];
const modules: ModuleProcess[] = [];
const namespaces: PidNamespace[] = [];
afterEach(async () => {
  for (const m of modules.splice(0)) m.child.kill("SIGKILL");
  // Ends every process a pid-reuse case started in its namespace, the stranger included.
  for (const ns of namespaces.splice(0)) await ns.close();
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

/**
 * A pid namespace of the case's own (test/support/pid-namespace.ts): the supervisors, their tasks and the
 * stranger all run in it as modules, so the stranger gets the pid it is after without racing the suite's
 * other forks, and a killed task's pid is freed (its PID 1 reaps) whatever the suite's own PID 1 does.
 */
async function namespace() {
  const ns = await PidNamespace.start();
  namespaces.push(ns);
  const start = async (s: string, extra: Partial<ModuleLaunch> = {}) => {
    const m = await ModuleProcess.start({ storage: s, placement: "process-group", wrap: ns.wrap, ...extra });
    modules.push(m);
    return m;
  };
  /** SIGKILL the module itself (its parent is nsenter, which exits with it). */
  const kill9 = async (m: ModuleProcess) => {
    ns.kill(m.ready.pid, "SIGKILL");
    await m.exited;
  };
  /** The stranger's identity (pid, start time) and whether it still runs: a signal would have ended the `sleep`. */
  const untouched = (pid: number, startTime: string) => {
    const fields = ns.stat(pid)?.split(" ") ?? [];
    return fields[0] === String(pid) && fields[2] !== "Z" && fields[21] === startTime;
  };
  const startTimeOf = (pid: number) => ns.stat(pid)!.split(" ")[21];
  return { ns, start, kill9, untouched, startTimeOf };
}

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
    const { ns, start, kill9, untouched, startTimeOf } = await namespace();
    const holder = await start(s);
    const holderPid = holder.ready.pid;
    expect(lockHolder(s).pid).toBe(holderPid);
    await kill9(holder);
    const stranger = await ns.spawnWithPid(holderPid);
    const born = startTimeOf(stranger);
    expect(lockHolder(s).pid).toBe(stranger);
    const next = await start(s);
    expect(lockHolder(s).pid).toBe(next.ready.pid);
    await next.drain("restart");
    expect(existsSync(join(s, "supervisor.lock"))).toBe(false);
    expect(untouched(stranger, born)).toBe(true);
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
  it("through replay: reported lost with the reason, never adopted, never signalled", async () => {
    const s = storage();
    const { ns, start, untouched, startTimeOf } = await namespace();
    // A task started by one supervisor, SIGKILLed with no one watching, its pid given to a stranger.
    const first = await start(s);
    const task = (await first.request("run", { spec: { id: "victim", argv: ["sleep", "60"] } })).task;
    await first.drain("restart"); // tasks run on; nobody watches
    ns.kill(-task.pgid, "SIGKILL");
    const stranger = await ns.spawnWithPid(task.pid);
    const born = startTimeOf(stranger);
    expect(born).not.toBe(task.startTime);

    const sup = await start(s);
    const replay = sup.ready.replay;
    expect(replay.adopted).not.toContain("victim");
    const done = replay.finished.find((f: { id: string }) => f.id === "victim");
    expect(done?.state).toBe("lost");
    expect(done?.reason).toContain("pid reused");
    expect(untouched(stranger, born)).toBe(true);
    await sup.drain("restart");
    expect(untouched(stranger, born)).toBe(true);
  });

  it("through kill(): an adopted task whose pid was reused since is not signalled", async () => {
    const s = storage();
    const { ns, start, untouched, startTimeOf } = await namespace();
    const first = await start(s);
    const task = (await first.request("run", { spec: { id: "victim", argv: ["sleep", "60"] } })).task;
    await first.drain("restart");
    // Adopted by a supervisor that checks liveness rarely, so only kill() looks at the pid.
    const sup = await start(s, { livenessMs: 600_000 });
    expect(sup.ready.replay.adopted).toEqual(["victim"]);
    ns.kill(-task.pgid, "SIGKILL");
    const stranger = await ns.spawnWithPid(task.pid);
    const born = startTimeOf(stranger);
    const result = await sup.request("kill", { id: "victim", graceMs: 200 });
    expect(untouched(stranger, born)).toBe(true);
    expect(result.task.state).toBe("lost");
    expect(result.task.reason).toContain("pid");
    expect(["pid-reused", "terminal"]).toContain(result.how);
  });
});
