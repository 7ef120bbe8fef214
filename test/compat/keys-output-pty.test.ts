import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { unfinishedGroupMembers } from "../support/group.ts";
import { PREVIOUS_RELEASE } from "../support/previous-release.ts";
import type { Release } from "../support/release-process.ts";
import { programOf } from "../support/storage-processes.ts";
import { ioFile, readIo, recordOf, type Storage, THIS_BUILD as NEW, TwoReleases } from "../support/two-releases.ts";
import { waitFor } from "../support/wait.ts";

/*
 * The rest of the on-disk contract between 443e5b2 and this build, in both
 * directions on one storage (process-group): a key's generations, the output
 * bound's dropped bytes, and a PTY task's terminal (`pty/in`, `pty/info`).
 */
const t = await TwoReleases.make("test/compat/keys-output-pty");

/** The two orders: who started the task, who takes it up. */
const directions = [
  [`${PREVIOUS_RELEASE} starts, this build takes up`, "old-first"],
  [`this build starts, ${PREVIOUS_RELEASE} takes up`, "new-first"],
] as const;

function pair(ctx: Parameters<TwoReleases["old"]>[0], order: "old-first" | "new-first"): { first: Release; second: Release } {
  const old = t.old(ctx);
  t.needShim(ctx);
  return order === "old-first" ? { first: old, second: NEW } : { first: NEW, second: old };
}

/** The program the task's leader runs: the shim (`outlive-shim ID`) for this build, `/bin/sh -c` (the wrapper) for 443e5b2. */
function expectUnder(release: Release, s: Storage, id: string): void {
  const { argv } = programOf(recordOf(s, id).pid);
  if (release === NEW) expect(argv).toEqual(["outlive-shim", id]);
  else expect(argv.slice(0, 2)).toEqual(["/bin/sh", "-c"]);
}

describe("a key's live task, superseded by the other release's run under the same key", () => {
  it.for(directions)("%s", { timeout: 120_000 }, async ([, order], ctx) => {
    const { first, second } = pair(ctx, order);
    const s = t.newStorage("process-group");
    expect((await t.cliOk(first, ["run", ...s.flags, "--id", "gen-1", "--key", "k", "--", "sleep", "120"])).trim()).toBe("gen-1");
    expectUnder(first, s, "gen-1");
    const pgid = recordOf(s, "gen-1").pgid;
    expect((await t.cliOk(second, ["run", ...s.flags, "--id", "gen-2", "--key", "k", "--", "sh", "-c", "exit 0"])).trim()).toBe("gen-2");
    const tasks = await t.psAll(second, s);
    expect(tasks["gen-1"]).toMatchObject({ state: "killed", key: "k", generation: 1 });
    expect(tasks["gen-1"].reason).toContain("superseded by generation 2");
    expect(tasks["gen-2"]).toMatchObject({ key: "k", generation: 2 });
    // Ended, a zombie handed to PID 1 aside (one that reaps nothing keeps it in the group).
    await waitFor("gen-1's process group to be empty", () => unfinishedGroupMembers(pgid).length === 0);
    // And the first release, reading the key again, goes on from the other's generation.
    expect((await t.cliOk(first, ["run", ...s.flags, "--id", "gen-3", "--key", "k", "--", "sh", "-c", "exit 0"])).trim()).toBe("gen-3");
    expect((await t.psAll(first, s))["gen-3"]).toMatchObject({ key: "k", generation: 3 });
    await t.endStorage(s);
  });
});

describe("output past its bound, read by the other release", () => {
  it.for(directions)("%s", { timeout: 120_000 }, async ([, order], ctx) => {
    const { first, second } = pair(ctx, order);
    const s = t.newStorage("process-group");
    const lines = "for i in $(seq 1 3000); do echo line-$i; done";
    expect((await t.cliOk(first, ["run", ...s.flags, "--id", "chatty", "--max-output", "4096", "--", "sh", "-c", lines])).trim()).toBe("chatty");
    expect((await t.waitCli(first, s, "chatty")).code).toBe(0);
    expect(existsSync(`${ioFile(s, "chatty", "stdout")}.dropped`)).toBe(true);
    const byFirst = await t.cli(first, ["logs", "--storage", s.dir, "chatty"]);
    const bySecond = await t.cli(second, ["logs", "--storage", s.dir, "chatty"]);
    // The same whole lines, the newest kept and the oldest dropped.
    expect(bySecond).toEqual(byFirst);
    expect(bySecond.out.endsWith("line-3000\n")).toBe(true);
    expect(bySecond.out.startsWith("line-1\n")).toBe(false);
    // Read from offset 0: the same chunks, the first one the bytes the bound dropped (`stdout.dropped`).
    const chunks = async (release: Release) => (await t.cliOk(release, ["logs", "--storage", s.dir, "--from", "0", "--json", "chatty"])).trim().split("\n").map((l) => JSON.parse(l));
    const secondChunks = await chunks(second);
    expect(secondChunks).toEqual(await chunks(first));
    expect(secondChunks[0]).toMatchObject({ stream: "stdout", offset: 0, text: "" });
    expect(secondChunks[0].missed).toBeGreaterThan(0);
    await t.endStorage(s);
  });
});

describe("a PTY task, typed into, resized and waited on by the other release", () => {
  it.for(directions)("%s", { timeout: 120_000 }, async ([, order], ctx) => {
    const { first, second } = pair(ctx, order);
    const s = t.newStorage("process-group");
    expect((await t.cliOk(first, ["run", ...s.flags, "--id", "term", "--pty", "--", "bash", "--norc", "--noprofile", "-i"])).trim()).toBe("term");
    await waitFor("the terminal to be up", () => existsSync(`${s.dir}/tasks/term/pty/info`));
    if (first === NEW) expectUnder(first, s, "term");
    expect((await t.cli(second, ["send", ...s.flags, "term", "echo typed-$((6*7))\\n"])).code).toBe(0);
    await waitFor("the typed line to run", () => readIo(s, "term", "stdout").includes("typed-42"));
    expect((await t.cli(second, ["resize", ...s.flags, "term", "100", "30"])).code).toBe(0);
    expect((await t.cli(second, ["send", ...s.flags, "term", "stty size\\n"])).code).toBe(0);
    await waitFor("the new size to show", () => readIo(s, "term", "stdout").includes("30 100"));
    expect((await t.cli(second, ["send", ...s.flags, "term", "exit 3\\n"])).code).toBe(0);
    expect(await t.waitCli(second, s, "term")).toMatchObject({ code: 3, record: { state: "exited", exitCode: 3 } });
    expect((await t.cli(second, ["logs", "--storage", s.dir, "term"])).out).toContain("typed-42");
    await t.endStorage(s);
  });
});
