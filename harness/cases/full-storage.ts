/**
 * full-storage: the module's storage (a tmpfs of its own) fills while tasks
 * run — by a task's own output, then by `dd`. Every end is still recorded
 * with its real code, the module restarts on the full disk (its ballast),
 * and after space is freed everything goes on.
 */
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { taskPaths } from "../../lib/mod.ts";
import { readExitMarkerNow } from "../../lib/observe/exit-marker.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const scenario = defineScenario({
  name: "full-storage",
  summary: "a storage that fills while tasks run: real exit codes, the watchdog's mark, output cut off and said, a restart on the full disk, and on after space is freed",
  tmpfsStorages: { full: "8m" },
  async inside(ctx) {
    const storage = ctx.storageFor("full");
    const d = ctx.daemon({ storage });
    await d.start();
    await d.run({ id: "quiet", shell: "echo early; sleep 3; echo late; exit 4" });
    await d.run({ id: "deadline", shell: "sleep 30", timeoutSeconds: 3 });
    await d.run({ id: "sleeper", shell: "sleep 60" });
    await d.run({ id: "filler", shell: "echo start; head -c 20000000 /dev/zero; exit 7" });
    const filler = await ctx.completion(d, "filler");
    ctx.check("filler, whose output filled the disk, ended exited with its real code 7", filler.state === "exited" && filler.exitCode === 7, filler);
    ctx.check("filler's reason says its output is cut off where the disk filled", /its output is cut off where the disk filled/.test(filler.reason ?? ""), filler.reason);
    // Whatever its reserves left free is taken too.
    const junk = join(storage, "junk");
    spawnSync("dd", ["if=/dev/zero", `of=${junk}`, "bs=4k"], { stdio: "ignore" });
    const refused = await d.run({ id: "refused", argv: ["true"] }).then(() => null, (e: Error) => e.message);
    ctx.check("a run on the full disk is refused, naming the storage and ENOSPC", refused !== null && refused.includes(storage) && refused.includes("ENOSPC"), refused);

    await d.killModule("module down while the disk is full");
    const marker = (id: string) => readExitMarkerNow(taskPaths(storage, id).exit).kind === "code";
    await ctx.waitFor("quiet and deadline to end while no module runs", () => marker("quiet") && marker("deadline"), 20_000);
    const mod = await d.start();
    ctx.check("the next module started on the full disk", mod.ready !== undefined, mod.ready);
    const finished: Array<{ id: string; state: string; exitCode: number | null; reason: string }> = mod.ready.replay.finished;
    const quiet = finished.find((f) => f.id === "quiet");
    ctx.check("quiet ended exited 4, read from its reserved exit marker", quiet?.state === "exited" && quiet.exitCode === 4, quiet);
    ctx.check("quiet's output before the disk filled is there", ctx.output("quiet", "stdout", storage).startsWith("early\n"), ctx.output("quiet", "stdout", storage));
    const deadline = finished.find((f) => f.id === "deadline");
    ctx.check("deadline ended timed_out by its watchdog (its mark renamed into place)", deadline?.state === "timed_out" && /watchdog/.test(deadline.reason), deadline);
    ctx.check("sleeper was adopted", mod.ready.replay.adopted.includes("sleeper"), mod.ready.replay.adopted);
    for (const id of ["quiet", "deadline"]) {
      const done = await ctx.completion(d, id);
      const stored = await ctx.record(id, storage);
      ctx.check(`${id}'s end is stored, not only reported`, stored?.state === done.state && stored?.exitCode === done.exitCode, stored);
    }

    rmSync(junk);
    const after = await d.run({ id: "after", shell: "echo fine; exit 3" });
    const afterDone = await ctx.completion(d, after.id);
    ctx.check("after space is freed, a new task runs and ends exited 3", afterDone.state === "exited" && afterDone.exitCode === 3, afterDone);
    await d.stop("disable");
    const sleeper = await ctx.record("sleeper", storage);
    ctx.check("sleeper was ended by the disable, and its end stored", sleeper?.state === "killed", sleeper);
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
