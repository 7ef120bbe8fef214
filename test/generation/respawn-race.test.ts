import { describe, expect, it } from "vitest";
import { childProcessSource, GenerationTable, type ExitEvent, type OutputEvent } from "../../lib/generation/mod.ts";
import { isRunning } from "../../lib/proc/identity.ts";
import { endByPid, KEY, runGuarded, runNaive, runSuccessorExitsFirst, violations } from "./respawn-race.ts";
import { waitFor } from "../support/wait.ts";

describe("respawn race with real processes (field-notes section 3)", () => {
  it("the naive Map-keyed table gets it wrong, so this reproduction can fail", async () => {
    const { view, pids } = await runNaive();
    const found = violations(view);
    expect(found.length).toBeGreaterThan(0);
    // The very symptoms of the field report.
    expect(view.deliveredToSuccessor).toContain("old");
    expect(view.exitsWhileSuccessorAlive).toBeGreaterThan(0);
    expect(view.successorTracked).toBe(false);
    for (const pid of pids) expect(isRunning(pid)).toBe(false);
  });

  it("the successor gets none of the predecessor's output or exit, stays tracked and killable, and exits once", async () => {
    const run = await runGuarded();
    expect(violations(run.view)).toEqual([]);
    // The predecessor really did keep writing after it was superseded...
    const lateOld = run.raw.filter((c) => c.pid === run.predecessorPid && c.text.includes("old got TERM"));
    expect(lateOld.length).toBe(1);
    expect(run.raw.filter((c) => c.pid === run.predecessorPid).length).toBeGreaterThan(run.outputs.filter((o) => o.generation === 1).length);
    // ...and its end is reported as retired (143), never as the key's exit.
    expect(run.retired).toMatchObject([{ key: KEY, generation: 1, by: 2, code: 143 }]);
    expect(run.exits).toMatchObject([{ key: KEY, generation: 2, signal: "SIGTERM", killSignal: "SIGTERM" }]);
    expect(run.outputs.filter((o) => o.generation === 2).map((o) => o.text).join("")).toBe("new ready\n");
    for (const pid of run.pids) expect(isRunning(pid)).toBe(false);
  });

  it("the predecessor stays stale when the successor exits before the predecessor's late close", async () => {
    const run = await runSuccessorExitsFirst();
    const successorExit = run.exits.find((e) => e.generation === run.successorGeneration)!;
    expect(run.exits).toMatchObject([{ generation: run.successorGeneration, code: 7 }]);
    // At the successor's exit the key is free, but the predecessor is still
    // live, tracked, and not current.
    expect(run.afterSuccessorExit.current).toBeNull();
    expect(run.afterSuccessorExit.liveGenerations).toEqual([run.predecessorGeneration]);
    expect(run.afterSuccessorExit.predecessorCurrent).toBe(false);
    // The window was real: the predecessor wrote after the successor had exited.
    const writtenAfter = run.raw.filter((c) => c.pid === run.predecessorPid && c.at > run.afterSuccessorExit.exitAt);
    expect(writtenAfter.length).toBeGreaterThan(0);
    // None of it was delivered, and its exit is a retirement, not an exit.
    expect(run.outputs.filter((o) => o.generation === run.predecessorGeneration && o.afterSupersede)).toEqual([]);
    expect(run.outputs.some((o) => o.generation === run.successorGeneration && o.text.includes("old"))).toBe(false);
    expect(run.retired).toMatchObject([{ generation: run.predecessorGeneration, code: 143 }]);
    expect(successorExit.error).toBeNull();
    for (const pid of run.pids) expect(isRunning(pid)).toBe(false);
  });

  it("a listener that spawns again from inside exit finds the key free", async () => {
    const table = new GenerationTable(childProcessSource());
    const exits: ExitEvent[] = [];
    const outputs: OutputEvent[] = [];
    const pids: Array<number | null> = [];
    const respawns: Array<ReturnType<typeof table.spawn>> = [];
    table.on("output", (e) => outputs.push(e));
    table.on("exit", (e) => {
      exits.push(e);
      if (e.generation === 1) {
        // Inside exit the key must already be free, and the new run must not be stale.
        const again = table.spawn(KEY, { command: "sh", args: ["-c", "echo second; exit 2"] });
        pids.push(again.pid);
        respawns.push(again);
      }
    });
    try {
      pids.push(table.spawn(KEY, { command: "sh", args: ["-c", "echo first; exit 1"] }).pid);
      await waitFor("both generations to exit", () => exits.length >= 2);
      expect(respawns).toMatchObject([{ generation: 2, superseded: null }]);
      expect(exits.map((e) => [e.generation, e.code])).toEqual([[1, 1], [2, 2]]);
      expect(outputs.map((o) => [o.generation, String(o.data)])).toEqual([[1, "first\n"], [2, "second\n"]]);
      expect(table.live()).toEqual([]);
    } finally {
      table.killAll("SIGKILL");
      await endByPid(pids);
    }
  });

  it("a command that cannot be spawned ends its generation once, with a SPAWN_FAILED error", async () => {
    const table = new GenerationTable(childProcessSource());
    const exits: ExitEvent[] = [];
    table.on("exit", (e) => exits.push(e));
    const run = table.spawn(KEY, { command: "/nonexistent/outlive-no-such-command" });
    expect(run.pid).toBeNull();
    await waitFor("the failed generation to settle", () => exits.length > 0);
    await new Promise((r) => setTimeout(r, 100)); // node also emits close after error; it must not count
    expect(exits).toHaveLength(1);
    expect(exits[0].error?.code).toBe("SPAWN_FAILED");
    expect(table.current(KEY)).toBeNull();
  });
});
