/**
 * pty-restart: an interactive bash on a terminal held inside its own user
 * scope survives a module restart done the field's way (drain "restart",
 * then cgroup.kill on the module's cgroup). The next module types a command
 * into it and reads the answer, resizes it (stty size shows the new size),
 * and kills it: the terminal hangs up, the EXIT trap runs, the real exit code
 * (129, SIGHUP) is recorded, and the scope is gone.
 */
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const scenario = defineScenario({
  name: "pty-restart",
  summary: "a bash PTY task survives drain + cgroup.kill; the next module writes, resizes and kills it",
  timeoutMs: 120_000,
  async inside(ctx) {
    const d = ctx.daemon();
    let mod = await d.start();
    ctx.check("the module chose systemd-scope", mod.ready.placement === "systemd-scope", mod.ready.reason);
    const trapFile = join(ctx.storage, "exit-trap-ran");
    const t = await d.run({ id: "shell", argv: ["bash", "--norc", "--noprofile", "-i"], pty: { cols: 80, rows: 24 } });
    ctx.check("the PTY task runs in its own user scope", t.location.unit === `${ctx.prefix}-task-shell.scope` && t.location.manager === "user", t.location);
    await mod.request("write", { id: "shell", data: `trap 'echo cleanup ran > ${trapFile}' EXIT\n[ -t 0 ] && echo on-a-tty\n` });
    await ctx.waitFor("bash to answer on its terminal", () => /on-a-tty\r\n/.test(ctx.output("shell")));

    mod = await d.restart("restart");
    ctx.mark("restart", "drain + cgroup.kill of the module");
    ctx.check("the new module adopted the PTY task", mod.ready.replay.adopted.includes("shell"), mod.ready.replay);

    await mod.request("write", { id: "shell", data: "echo answer-$((6*7))\n" });
    await ctx.waitFor("the answer typed after the restart", () => /answer-42\r\n/.test(ctx.output("shell")));
    ctx.check("the terminal took input after the restart", true, ctx.output("shell").slice(-80));

    const resized = await mod.request("resize", { id: "shell", cols: 132, rows: 43 });
    ctx.check("resize was accepted", resized.size?.cols === 132 && resized.size?.rows === 43, resized);
    await mod.request("write", { id: "shell", data: "stty size\n" });
    await ctx.waitFor("stty size to show the new size", () => /43 132\r\n/.test(ctx.output("shell")));
    ctx.check("stty size shows 43 132", true);

    const kill = await mod.request("kill", { id: "shell", graceMs: 3000 });
    ctx.mark("kill", "kill the PTY task through the new module");
    ctx.check("the kill ended it without SIGKILL (the terminal hung up)", kill.how === "term", kill.how);
    ctx.check("its real exit code is recorded: 129 (SIGHUP)", kill.task.exitCode === 129 && kill.task.state === "killed", kill.task);
    let trap = "";
    try {
      trap = readFileSync(trapFile, "utf8");
    } catch {}
    ctx.check("its EXIT trap ran", trap === "cleanup ran\n", trap);
    await ctx.waitFor("the scope to be gone", async () => (await ctx.units()).length === 0, 10_000);
    ctx.check("no task scope is left", (await ctx.units()).length === 0, await ctx.units());
    await d.stop("disable");
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
