// The Deno suite: the same library, run by Deno from the TypeScript sources,
// against real processes. Run: node_modules/.bin/deno test -A test/deno/
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ModuleProcess } from "../../harness/inside/module/module-client.ts";
import { killLadder, readProcStat, Supervisor } from "../../lib/internal.ts";
import { exitCodeWritten, waitFor } from "../support/wait.ts";
import { spawn } from "node:child_process";

Deno.test("spawn: arguments arrive byte for byte and the exit code is real", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-deno-"));
  const sup = await Supervisor.open({ storage, log: () => {} });
  try {
    const weird = ["${HOME}", "$$", "a'b\"c", "back\\slash", "new\nline", "ünï ✓"];
    const task = await sup.run({ argv: ["sh", "-c", 'for a in "$@"; do printf "%s\\0" "$a"; done; exit 9', "sh", ...weird] });
    const done = await sup.wait(task.id);
    assert.equal(done.state, "exited");
    assert.equal(done.exitCode, 9);
    const out = readFileSync(join(storage, "tasks", task.id, "io", "stdout"), "utf8");
    assert.deepEqual(out.split("\0").slice(0, -1), weird);
    // True times under Deno too: the exit marker's own time, the process's own start, the duration between.
    assert.equal(done.finishedAtSource, "exit-marker");
    const markerAt = statSync(join(storage, "tasks", task.id, "io", "exit")).mtime!.getTime();
    assert.ok(Math.abs(Date.parse(done.finishedAt!) - markerAt) <= 50, `finishedAt ${done.finishedAt} vs io/exit ${markerAt}`);
    // Read from /proc in clock ticks, so up to a tick before run began; never after the end.
    assert.ok(Date.parse(done.startedAt!) >= Date.parse(done.createdAt) - 20 && done.startedAt! <= done.finishedAt!, `startedAt ${done.startedAt} createdAt ${done.createdAt} finishedAt ${done.finishedAt}`);
    assert.equal(done.durationMs, Date.parse(done.finishedAt!) - Date.parse(done.startedAt!));
  } finally {
    await sup.close();
    rmSync(storage, { recursive: true, force: true });
  }
});

Deno.test("kill ladder: TERM within the grace, else SIGKILL", async () => {
  const polite = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
  const stubborn = spawn("sh", ["-c", "trap '' TERM; sleep 30 & wait"], { detached: true, stdio: "ignore" });
  // `sleep 30 &` has started once the shell has a child: its TERM trap is set by then.
  const started = (pid: number) => readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim() !== "";
  await waitFor("the TERM-ignoring shell to start its sleep", () => started(stubborn.pid!));
  const target = (pid: number) => ({ pid, pgid: pid, startTime: readProcStat(pid)!.startTime });
  assert.equal(await killLadder(target(polite.pid!), { graceMs: 1000 }), "term");
  assert.equal(await killLadder(target(stubborn.pid!), { graceMs: 300 }), "kill");
});

Deno.test("restart: a Deno module is SIGKILLed and the next one replays its tasks", async () => {
  const storage = mkdtempSync(join(tmpdir(), "outlive-deno-restart-"));
  const launch = { storage, runtime: "deno" as const, placement: "process-group", livenessMs: 100 };
  const first = await ModuleProcess.start(launch);
  let second: ModuleProcess | undefined;
  try {
    const running = (await first.request("run", { spec: { id: "keeps-running", argv: ["sleep", "30"] } })).task;
    await first.request("run", { spec: { id: "ends-meanwhile", shell: "sleep 0.5; exit 4" } });
    await first.kill9();
    await waitFor("ends-meanwhile to end with no supervisor", () => exitCodeWritten(storage, "ends-meanwhile"));
    second = await ModuleProcess.start(launch);
    assert.deepEqual(second.ready.replay.adopted, ["keeps-running"]);
    const ended = second.ready.replay.finished.find((f: { id: string }) => f.id === "ends-meanwhile");
    assert.equal(ended.state, "exited");
    assert.equal(ended.exitCode, 4);
    const killed = await second.request("kill", { id: "keeps-running", graceMs: 1000 });
    assert.equal(killed.task.state, "killed");
    assert.equal(existsSync(`/proc/${running.pid}/stat`) && !readFileSync(`/proc/${running.pid}/stat`, "utf8").includes(") Z"), false);
    await second.drain("disable");
  } finally {
    first.child.kill("SIGKILL");
    second?.child.kill("SIGKILL");
    rmSync(storage, { recursive: true, force: true });
  }
});
