import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isRunning, Supervisor } from "../../lib/internal.ts";
import { START_TIME_PRECISION_MS } from "../../lib/proc/start-time.ts";
import { taskPaths } from "../../lib/store/layout.ts";
import { exitCodeWritten, waitFor } from "../support/wait.ts";
import { fakeSystemctl } from "../support/fake-systemctl.ts";

const storages: string[] = [];
const open: Supervisor[] = [];
afterEach(async () => {
  for (const sup of open.splice(0)) {
    await sup.stopAll().catch(() => {});
    await sup.close();
  }
  for (const s of storages.splice(0)) rmSync(s, { recursive: true, force: true });
});

async function supervisor(storage?: string) {
  const dir = storage ?? mkdtempSync(join(tmpdir(), "outlive-kill-"));
  if (!storage) storages.push(dir);
  const sup = await Supervisor.open({ storage: dir, log: () => {}, livenessIntervalMs: 50, graceMs: 1000 });
  open.push(sup);
  return sup;
}


describe("kill", () => {
  it("two kills at once share one ladder; a kill of a finished task returns it as it is", async () => {
    const sup = await supervisor();
    const t = await sup.run({ argv: ["sleep", "30"] });
    const [a, b] = await Promise.all([sup.kill(t.id), sup.kill(t.id)]);
    expect(a).toBe(b);
    expect(a.record.state).toBe("killed");
    const again = await sup.kill(t.id);
    expect(again.how).toBe("terminal");
    expect(again.record).toEqual(a.record);
  });

  it("SIGKILL when TERM is ignored past the grace", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-kill-"));
    storages.push(storage);
    const sup = await supervisor(storage);
    const t = await sup.run({ shell: "trap '' TERM; echo ignoring; sleep 30" });
    // A TERM that came before the trap would end the shell: the answer would be "term".
    const stdout = join(storage, "tasks", t.id, "io", "stdout");
    await waitFor("the task to ignore TERM", () => readFileSync(stdout, "utf8") === "ignoring\n");
    const r = await sup.kill(t.id, { graceMs: 300 });
    expect(r.how).toBe("kill");
    expect(r.record.state).toBe("killed");
    expect(isRunning(t.pid!)).toBe(false);
  });

  // Asking systemctl at a kill's TERM (its exec took over 2 s on a loaded machine) held the task's end past the
  // ladder's grace, whose KILL then took the shim before it wrote the code (a loaded run of the suite: how "kill"
  // where "term" was due). A systemctl that answers after 5 s stands for that machine here, with a trace of each
  // time it is run. Nothing asks it: where systemd does not run the host nothing can say it is stopping, and where
  // it does, the kill's io/kill-asked says the TERM is the kill's (test/kill/kill-asked.test.ts makes such a host).
  it("a kill's TERM ends the task within the grace, with its code, however slow systemctl would be", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-kill-"));
    storages.push(storage);
    const { PATH } = fakeSystemctl(join(storage, "bin"), "sleep 5\necho stopping", join(storage, "asked"));
    const sup = await supervisor(storage);
    const t = await sup.run({ argv: ["sleep", "30"], env: { PATH: PATH! } });
    const r = await sup.kill(t.id, { graceMs: 2000 });
    expect(r.how).toBe("term");
    expect(r.record).toMatchObject({ state: "killed", exitCode: 143 });
    expect(existsSync(join(storage, "asked")), "systemctl was run").toBe(false);
    expect(existsSync(taskPaths(storage, t.id).hostStopping)).toBe(false);
    expect(existsSync(taskPaths(storage, t.id).killAsked)).toBe(true);
  });

  it("an exit code written before the kill began wins over the kill", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-kill-"));
    storages.push(storage);
    const sup = await supervisor(storage);
    // Exits at once: the marker is there before any signal.
    const t = await sup.run({ shell: "exit 4" });
    await waitFor("the exit code in io/exit", () => exitCodeWritten(storage, t.id));
    const r = await sup.kill(t.id);
    expect(r.record).toMatchObject({ state: "exited", exitCode: 4 });
  });
});

describe("timeouts and backstops", () => {
  it("a task past its timeout ends timed_out, with the limit named", async () => {
    const sup = await supervisor();
    const t = await sup.run({ argv: ["sleep", "30"], timeoutSeconds: 1 });
    const done = await sup.wait(t.id);
    expect(done.state).toBe("timed_out");
    expect(done.reason).toContain("timeout of 1 s");
  });

  it("when the supervisor's deadline kill comes before the task's watchdog, it leaves the watchdog's marker, which dates the end", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-deadline-mark-"));
    storages.push(storage);
    const sup = await supervisor(storage);
    // 3 s: the stop below lands well before the watchdog's deadline, however slow the machine.
    const t = await sup.run({ argv: ["sleep", "30"], timeoutSeconds: 3 });
    const paths = taskPaths(storage, t.id);
    // The whole task stopped, its watchdog with it: only the supervisor's own timer can end it now.
    process.kill(-t.pgid!, "SIGSTOP");
    const done = await sup.wait(t.id);
    expect(done).toMatchObject({ state: "timed_out", exitCode: null, finishedAtSource: "timed-out-marker" });
    expect(done.reason).toContain("ran past its timeout of 3 s");
    expect(existsSync(paths.timedOut), "io/timed-out").toBe(true);
    expect(existsSync(`${paths.timedOut}.reserved`), "the reserve, renamed into place").toBe(false);
    const mark = statSync(paths.timedOut);
    const marked = mark.mtimeMs;
    // The marker's time as outlive reads it: Node's Date of a file time rounds the kernel's nanoseconds to the
    // nearest millisecond, so a floor of mtimeMs is a millisecond early whenever the fraction is past one half
    // (CI met that once: 1796596766768 against 767).
    expect(done.finishedAt).toBe(mark.mtime.toISOString());
    // Marked at the deadline (its timer fires up to 5 ms early; the file's coarse clock may read a tick early).
    expect(marked).toBeGreaterThanOrEqual(Date.parse(t.deadlineAt) - 5 - START_TIME_PRECISION_MS);
  });

  it("after a restart the deadline counts from the task's original start", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-deadline-"));
    storages.push(storage);
    const first = await supervisor(storage);
    const t = await first.run({ argv: ["sleep", "30"], timeoutSeconds: 5 });
    // The deadline is set when the task is made (createdAt), before its spawn.
    const createdAt = Date.parse(t.createdAt);
    expect(Date.parse(t.deadlineAt) - createdAt).toBe(5000);
    open.splice(open.indexOf(first), 1);
    await first.close();
    await new Promise((r) => setTimeout(r, 2500));
    const second = await supervisor(storage);
    expect(second.replayReport.adopted).toContain(t.id);
    const done = await second.wait(t.id);
    expect(done.state).toBe("timed_out");
    const endedAfter = Date.parse(done.finishedAt!) - createdAt;
    // Five seconds from the original start (plus the ladder), not five from the reopen at >= 2.5 s
    // (>= 7.5 s): margins of 2 s and 0.5 s, since load can only make the right answer later.
    // finishedAt is now the end's own evidence, the wrapper's end marker, whose file time is the kernel's
    // coarse clock (a tick, up to 10 ms, early) and whose warden counts in /proc/uptime's 10 ms: a CI run
    // dated this end 1 ms before the deadline. So the deadline, to that grain.
    expect(endedAfter).toBeGreaterThanOrEqual(5000 - 10);
    expect(endedAfter).toBeLessThan(7000);
  });

  it("with no supervisor isRunning, the wrapper's watchdog ends the task at its deadline", async () => {
    const storage = mkdtempSync(join(tmpdir(), "outlive-watchdog-"));
    storages.push(storage);
    const trap = join(storage, "term-seen");
    const first = await supervisor(storage);
    const t = await first.run({ argv: ["bash", "-c", `trap 'echo term > ${trap}; exit 143' TERM; sleep 30 & wait`], timeoutSeconds: 1 });
    open.splice(open.indexOf(first), 1);
    await first.close();
    // The watchdog fires at 1 s; this only waits for it (and fails at 20 s if it never does).
    await waitFor("the watchdog to end the task", () => !isRunning(t.pid!));
    const second = await supervisor(storage);
    const done = second.get(t.id);
    expect(done.state).toBe("timed_out");
    expect(done.reason).toContain("watchdog");
    expect(readFileSync(trap, "utf8")).toBe("term\n");
  });
});
