import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PREVIOUS_RELEASE } from "../support/previous-release.ts";
import {
  armed, endsWhenTold, exitCodeIn, readIo, runArgs, runsUntilKilled, tell, THIS_BUILD as NEW, timesOut, trapFile, TwoReleases,
} from "../support/two-releases.ts";

/*
 * A daemon's supervisor of one release adopts the other release's running
 * tasks at its open and watches them (its live watch, not a replay): it sees
 * one exit with its own code, one reach its deadline, and kills the third.
 */
const t = await TwoReleases.make("test/compat/adopted-and-watched");

describe.each(t.placements)("the other release's running tasks, adopted and watched by a daemon (%s)", (placement) => {
  it.for([
    [`${PREVIOUS_RELEASE}'s (shell wrapper), by this build's`, "old-first"],
    [`this build's (outlive-shim), by ${PREVIOUS_RELEASE}'s`, "new-first"],
  ] as const)("%s", { timeout: 180_000 }, async ([, order], ctx) => {
    const old = t.old(ctx);
    t.needShim(ctx);
    const [first, second] = order === "old-first" ? [old, NEW] : [NEW, old];
    const s = t.newStorage(placement);
    // The deadline leaves the daemon time to open (and adopt it still running) on a loaded machine.
    for (const spec of [endsWhenTold(s, "ends", 11), runsUntilKilled(s, "killed"), timesOut("deadline", 10)]) {
      expect((await t.cliOk(first, runArgs(s, spec))).trim()).toBe(spec.id);
    }
    await armed(s, "killed");
    const daemon = await t.startSupervisor(second, s);
    expect([...daemon.ready.replay.adopted].sort()).toEqual(["deadline", "ends", "killed"]);

    const ended = daemon.request("wait", { id: "ends" });
    tell(s, "ends");
    expect(await ended).toMatchObject({ state: "exited", exitCode: 11 });
    expect(readIo(s, "ends", "stdout")).toBe(`under ${first === NEW ? "outlive-shim" : "sh"}\ndone\n`);
    const deadline = await daemon.request("wait", { id: "deadline" });
    expect(deadline).toMatchObject({ state: "timed_out", exitCode: exitCodeIn(s, "deadline") });
    // Whichever ends it at the deadline first, the task's watchdog or the daemon's own deadline kill, says so.
    expect(deadline.reason).toMatch(/ended by its watchdog at its deadline|ran past its timeout of 10 s/);
    const killed = await daemon.request("kill", { id: "killed", options: { graceMs: 5000 } });
    expect(killed).toMatchObject({ how: "term", record: { state: "killed" } });
    expect(readFileSync(trapFile(s, "killed"), "utf8")).toBe("cleaned\n");
    await daemon.drain("disable");
    await t.endStorage(s);
  });
});
