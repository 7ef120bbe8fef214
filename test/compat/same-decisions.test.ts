import { describe, expect, it } from "vitest";
import { groupHasAnyMember, unfinishedGroupMembers } from "../support/group.ts";
import { PREVIOUS_RELEASE } from "../support/previous-release.ts";
import { alive } from "../support/storage-processes.ts";
import {
  armed, endsWhenTold, type Json, readIo, recordOf, runArgs, runsUntilKilled, type Spec, type Storage, tell, THIS_BUILD as NEW, timesOut, TwoReleases,
} from "../support/two-releases.ts";
import { exitCodeWritten, waitFor } from "../support/wait.ts";

/*
 * One storage, both readers: each release opens it read-only (replay decides
 * every task in memory and carries nothing out), so neither changes what the
 * other sees, and both must decide every task alike, whichever release
 * started the tasks: a live one, an exit with its code, a deadline, a command
 * killed by a signal of its own, a task whose leader (wrapper or shim) was
 * SIGKILLed with its command left running, one whose leader and command were
 * both SIGKILLed, and one that exited leaving a child in its group.
 */
const t = await TwoReleases.make("test/compat/same-decisions");

/** A decision without its times (the look's own time is in the reasons). */
function decisions(report: Json): Json {
  const { adopted, finished, unstored, unchanged, deferred } = report;
  return JSON.parse(JSON.stringify({ adopted: [...adopted].sort(), finished, unstored, unchanged, deferred }).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>"));
}

function tasks(s: Storage): Spec[] {
  const whenTold = (id: string, then: string): Spec => ({ id, argv: ["sh", "-c", `while [ ! -e ${s.dir}/go-${id} ]; do sleep 0.05; done; ${then}`] });
  return [
    runsUntilKilled(s, "running"),
    endsWhenTold(s, "exits-3", 3),
    whenTold("own-signal", "kill -9 $$"),
    runsUntilKilled(s, "leader-killed"),
    runsUntilKilled(s, "both-killed"),
    whenTold("left-a-child", "sleep 120 & exit 2"),
    // Last, so its deadline passes after the writer's last command even on a loaded machine.
    timesOut("deadline", 8),
  ];
}

describe.each(t.placements)("the same storage, opened read-only by each release, decided alike (%s)", (placement) => {
  it.for([
    [`tasks ${PREVIOUS_RELEASE} started (shell wrapper)`, "old-first"],
    ["tasks this build started (outlive-shim)", "new-first"],
  ] as const)("%s", { timeout: 180_000 }, async ([, order], ctx) => {
    const old = t.old(ctx);
    t.needShim(ctx);
    const writer = order === "old-first" ? old : NEW;
    const s = t.newStorage(placement);
    for (const spec of tasks(s)) expect((await t.cliOk(writer, runArgs(s, spec))).trim()).toBe(spec.id);
    for (const id of ["running", "leader-killed", "both-killed"]) await armed(s, id);
    // Everything below happens after the writer's last command: no record of it says how any task ended.
    for (const id of ["exits-3", "own-signal", "left-a-child"]) tell(s, id);
    const leader = (id: string) => recordOf(s, id).pid as number;
    const command = (id: string) => Number(readIo(s, id, "command-pid").trim());
    process.kill(leader("leader-killed"), "SIGKILL");
    process.kill(leader("both-killed"), "SIGKILL");
    process.kill(command("both-killed"), "SIGKILL");
    for (const id of ["exits-3", "own-signal", "left-a-child", "deadline"]) await waitFor(`${id} to end`, () => exitCodeWritten(s.dir, id), 30_000);
    for (const id of ["leader-killed", "both-killed"]) await waitFor(`${id}'s leader to be gone`, () => !alive(leader(id)));
    await waitFor("both-killed's command to be gone", () => !alive(command("both-killed")));
    for (const { id } of tasks(s)) expect(recordOf(s, id).state).toBe("running");

    const seen: Json[] = [];
    for (const reader of [old, NEW]) {
      const sup = await t.startSupervisor(reader, s, { readOnly: true });
      seen.push(sup.ready.replay);
      await sup.close();
    }
    const [byOld, byNew] = seen.map(decisions);
    expect(byNew).toEqual(byOld);
    // And what they agree on is right.
    expect(byOld.adopted).toEqual(["running"]);
    const decided = Object.fromEntries(byOld.unstored.map((u: Json) => [u.id, u]));
    expect(Object.keys(decided).sort()).toEqual(["both-killed", "deadline", "exits-3", "leader-killed", "left-a-child", "own-signal"]);
    expect(decided["exits-3"].state).toBe("exited");
    expect(decided["left-a-child"].state).toBe("exited");
    expect(decided.deadline.state).toBe("timed_out");
    expect(decided["leader-killed"].state).toBe("lost");
    expect(decided["both-killed"].state).toBe("lost");
    expect(byOld.finished.map((f: Json) => f.id).sort()).toEqual(Object.keys(decided).sort());
    expect(Object.fromEntries(byOld.finished.map((f: Json) => [f.id, f.exitCode]))).toMatchObject({ "exits-3": 3, "left-a-child": 2, "own-signal": 137 });

    // Neither look changed the storage; this build's stop-all ends what is left (the adopted task, the
    // command whose leader was killed, and under cgroup-v2 the child left behind, with its task's cgroup).
    const groups = tasks(s).map(({ id }) => recordOf(s, id).pgid as number);
    await t.endStorage(s);
    // A child an exited task left in its process group is left running by both releases (its reason says so):
    // this test ends the one it made.
    const left = recordOf(s, "left-a-child").pgid as number;
    if (placement === "process-group" && groupHasAnyMember(left)) process.kill(-left, "SIGKILL");
    // Ended, a zombie handed to PID 1 aside (one that reaps nothing keeps it in the group).
    for (const pgid of groups) await waitFor(`group ${pgid} to be empty`, () => unfinishedGroupMembers(pgid).length === 0);
  });
});
