// The real-process respawn race (field-notes section 3) on Deno 2, through
// Deno's node:child_process: the same scenarios the vitest file runs.
import assert from "node:assert/strict";
import { isRunning } from "../../lib/proc/identity.ts";
import { runGuarded, runNaive, runSuccessorExitsFirst, violations } from "../generation/respawn-race.ts";

/**
 * The predecessor traps TERM and exits 143 on its own. Deno 2.9's
 * node:child_process reports any child it has sent a signal to as
 * (null, that signal), whatever the child really did; node reports 143.
 * Either is an honest "it ended after our TERM" for this test.
 */
function assertTrappedExit(end: { code: number | null; signal: string | null }): void {
  assert.ok(end.code === 143 || (end.code === null && end.signal === "SIGTERM"), `unexpected end ${JSON.stringify(end)}`);
}

Deno.test("naive Map-keyed table: the reproduction catches the bug", async () => {
  const { view, pids } = await runNaive();
  assert.ok(violations(view).length > 0, "the naive table should have been caught");
  assert.ok(view.deliveredToSuccessor.includes("old"));
  assert.equal(view.successorTracked, false);
  for (const pid of pids) assert.equal(isRunning(pid), false, `pid ${pid} still alive`);
});

Deno.test("GenerationTable: successor isolated, tracked, killable, exits once", async () => {
  const run = await runGuarded();
  assert.deepEqual(violations(run.view), []);
  assert.equal(run.retired.length, 1);
  assert.equal(run.retired[0].generation, 1);
  assertTrappedExit(run.retired[0]);
  assert.deepEqual(run.exits.map((e) => [e.generation, e.signal]), [[2, "SIGTERM"]]);
  for (const pid of run.pids) assert.equal(isRunning(pid), false, `pid ${pid} still alive`);
});

Deno.test("GenerationTable: predecessor stays stale after the successor exits first", async () => {
  const run = await runSuccessorExitsFirst();
  assert.deepEqual(run.exits.map((e) => [e.generation, e.code]), [[run.successorGeneration, 7]]);
  assert.equal(run.afterSuccessorExit.current, null);
  assert.deepEqual(run.afterSuccessorExit.liveGenerations, [run.predecessorGeneration]);
  assert.equal(run.afterSuccessorExit.predecessorCurrent, false);
  assert.ok(run.raw.some((c) => c.pid === run.predecessorPid && c.at > run.afterSuccessorExit.exitAt));
  assert.deepEqual(run.outputs.filter((o) => o.generation === run.predecessorGeneration && o.afterSupersede), []);
  assert.equal(run.retired.length, 1);
  assertTrappedExit(run.retired[0]);
  for (const pid of run.pids) assert.equal(isRunning(pid), false, `pid ${pid} still alive`);
});
