/**
 * follow-restart: a module follows a task's output into a file; it is
 * drained and its cgroup killed mid-stream, the next module's follower
 * resumes at the file's size; that one's cgroup is killed with no notice
 * mid-stream, and a third resumes again. What the three followers stored,
 * end to end, is byte-identical to what the task wrote.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";
import { ModuleProcess } from "../inside/module/module-client.ts";

const LINES = 120;

const scenario = defineScenario({
  name: "follow-restart",
  summary: "a follower resumes across a drained and a crashed module, losing and repeating no byte",
  timeoutMs: 120_000,
  async inside(ctx) {
    const d = ctx.daemon();
    let mod = await d.start();
    const to = join(ctx.runDir, "followed-stdout");
    // Each line is numbered and padded, so a lost or repeated byte shows; 50 ms apart, about 6 s in all.
    const shell = `i=0; while [ $i -lt ${LINES} ]; do printf 'line %03d %s\\n' $i "$(printf '%060d' $i)"; i=$((i+1)); sleep 0.05; done`;
    const task = await d.run({ id: "chatty", shell });
    ctx.check("chatty runs in its own user scope", task.location.manager === "user" && task.location.unit === `${ctx.prefix}-task-chatty.scope`, task.location);
    const started = await mod.request("follow", { id: "chatty", to });
    ctx.check("the first follower starts at offset 0", started.from === 0, started);
    const size = () => ctx.output("chatty").length;
    await ctx.waitFor("a third of the output to be written", () => size() > (LINES / 3) * 71);

    mod = await d.restart("restart");
    ctx.mark("restart", "drained, then cgroup.kill, mid-stream");
    ctx.check("the new module adopted chatty", mod.ready.replay.adopted.includes("chatty"), mod.ready.replay);
    const second = await mod.request("follow", { id: "chatty", to });
    ctx.fact("resumedAfterDrainAt", second.from);
    ctx.check("the second follower resumes where the first stopped, mid-stream", second.from > 0 && second.from < size(), { from: second.from, written: size() });
    await ctx.waitFor("two thirds of the output to be written", () => size() > ((2 * LINES) / 3) * 71);

    mod = await d.crash();
    ctx.mark("crash", "cgroup.kill without notice, mid-stream");
    ctx.check("the third module adopted chatty", mod.ready.replay.adopted.includes("chatty"), mod.ready.replay);
    const third = await mod.request("follow", { id: "chatty", to });
    ctx.fact("resumedAfterCrashAt", third.from);
    ctx.check("the third follower resumes past the second's start", third.from > second.from, { second: second.from, third: third.from });
    if (!(mod instanceof ModuleProcess)) throw new Error("follow-restart runs outlive's own module");
    const followed = await mod.nextEvent((m) => m.event === "followed" && m.id === "chatty", 60_000);
    const done = await ctx.completion(d, "chatty", 30_000);
    ctx.check("chatty exited 0", done.state === "exited" && done.exitCode === 0, done);
    const expected = Array.from({ length: LINES }, (_, i) => `line ${String(i).padStart(3, "0")} ${String(i).padStart(60, "0")}\n`).join("");
    const stored = readFileSync(to, "utf8");
    ctx.check("the task wrote every line", ctx.output("chatty") === expected, ctx.output("chatty").slice(-200));
    ctx.check("the followers' concatenation is byte-identical to the task's output", stored === expected, { stored: stored.length, expected: expected.length });
    ctx.check("the completion carries the final offset the follower ended at", done.outputBytes?.stdout === expected.length && followed.bytes === expected.length, { outputBytes: done.outputBytes, followed: followed.bytes });
    ctx.check("no follower was told of dropped bytes", d.modules.every((m) => !m.events.some((e) => e.event === "missed")));
    await d.stop("disable");
    ctx.check("no task scope is left", (await ctx.units()).length === 0, await ctx.units());
  },
});

export default scenario;
runIfMain(import.meta.url, scenario.name);
