/**
 * sidecar-rust (issue 22): the module is a supervisor of the user's own,
 * written in Rust (examples/clients/rust, `sidecar-supervisor`), that keeps
 * its background tasks in `outlive serve`, started as its sidecar child and
 * spoken to in JSON-RPC over the child's stdio. The daemon restarts it the
 * field's way (drain "restart", then cgroup.kill on the module's cgroup,
 * which holds the Rust process and its `outlive serve`), and then with no
 * notice at all (cgroup.kill while the server is up): the tasks, placed in
 * systemd user scopes outside that cgroup, run on; each next module's
 * server adopts them; each completion reaches the module that runs when the
 * task ends once, with its real exit code, and once acknowledged never
 * comes again.
 *
 * The containers have no compiler: the binary is built on the host
 * (`prepareOnHost: ["rust-client"]`: offline, with Debian's serde_json) into
 * examples/clients/rust/target/ (ignored by git), which the container sees
 * through the project's bind. No cargo, no scenario: it skips with the reason.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defineScenario } from "../inside/define-scenario.ts";
import { RUST_CLIENT_BUILD_DIR } from "../shared/host-preparation.ts";
import { projectRoot } from "../shared/project-root.ts";
import { runIfMain } from "../inside/run-if-main.ts";
import type { ForeignModule } from "../inside/daemon/foreign-module.ts";

/** steady-output's lines, 0.15 s apart: long enough to be running when the restart comes. */
const TICKS = 40;

export default defineScenario({
  name: "sidecar-rust",
  summary: "a Rust supervisor with outlive serve as its sidecar: its tasks survive drain + cgroup.kill, and the next module gets each completion once",
  timeoutMs: 120_000,
  prepareOnHost: ["rust-client"],
  async inside(ctx) {
    const binary = join(projectRoot(), RUST_CLIENT_BUILD_DIR, "target", "release", "sidecar-supervisor");
    if (!existsSync(binary)) ctx.skip(`no ${binary}: the host side builds it before the steps (prepareOnHost: rust-client)`);
    const release = join(ctx.runDir, "release");
    const serve = [process.execPath, join(projectRoot(), "dist", "scripts", "bin.js"), "serve", "--storage", ctx.storage, "--prefix", ctx.prefix];
    const d = ctx.daemon({
      module: { argv: [binary, "--", ...serve], ready: { stdout: /^ready / }, drain: { stdin: "drain {reason}", waitMs: 10_000 } },
    });
    const lines = (m: unknown) => (m as ForeignModule).lines;
    /** Every `completion ID …` line of every module so far, for the timeline's delivery counts too. */
    const completionsOf = (id: string) => d.modules.flatMap((m, i) => lines(m).filter((l) => l.startsWith(`completion ${id} `)).map((l) => `${i + 1}: ${l}`));

    await d.start();
    const ready1 = await d.foreign.waitForLine(/^ready /);
    ctx.fact("ready1", ready1);
    ctx.check("the sidecar holds the storage and places tasks in systemd user scopes", /^ready holder systemd-scope /.test(ready1), ready1);

    const gate = `while [ ! -e '${release}' ]; do sleep 0.1; done`;
    const tasks = [
      { id: "exits-7-later", shell: `echo compiling; ${gate}; echo failed; exit 7`, state: "exited", exitCode: 7 },
      { id: "steady-output", shell: `i=1; while [ $i -le ${TICKS} ]; do echo tick $i; i=$((i+1)); sleep 0.15; done`, state: "exited", exitCode: 0 },
      { id: "trap-on-exit", shell: `trap 'echo cleanup ran' EXIT; echo serving; ${gate}`, state: "exited", exitCode: 0 },
    ];
    for (const t of tasks) {
      d.foreign.send(`run ${t.id} ${t.shell}`);
      const started = await d.foreign.waitForLine(new RegExp(`^(started|error run) ${t.id}\\b`));
      const cgroup = started.split(" ")[2] ?? "";
      ctx.check(`${t.id} runs in its own user scope, outside the module's cgroup`, started.startsWith("started") && cgroup.endsWith(`${ctx.prefix}-task-${t.id}.scope`) && !cgroup.includes("/module-"), started);
    }
    await ctx.waitFor("every task to start its work", () => tasks.every((t) => ctx.output(t.id) !== ""));

    const second = await d.restart("restart");
    ctx.check("the first module drained its sidecar and exited before the cgroup.kill", lines(d.modules[0]).includes("drained restart"), lines(d.modules[0]).slice(-5));
    ctx.check("a new module process", second.pid !== d.modules[0].pid, { first: d.modules[0].pid, second: second.pid });
    const ready2 = await d.foreign.waitForLine(/^ready /);
    const adopted = (/adopted=(\S*)/.exec(ready2)?.[1] ?? "").split(",");
    const finished = (/finished=(\S*)/.exec(ready2)?.[1] ?? "").split(",");
    // The gated tasks cannot end before the release; steady-output may have ended while no server ran, and replay says so.
    ctx.check("the next module's server adopted every gated task", ["exits-7-later", "trap-on-exit"].every((id) => adopted.includes(id)), ready2);
    ctx.check("and adopted steady-output or found it finished", adopted.includes("steady-output") || finished.includes("steady-output"), ready2);

    // Once more with no notice: cgroup.kill on a module whose sidecar server is alive and holds the storage.
    const inModule = d.sim.cgroup ? ctx.processesIn(d.sim.cgroup.dir) : [];
    ctx.check("the module's cgroup holds the Rust supervisor and its outlive serve", inModule.length >= 2, inModule);
    await d.crash();
    const ready3 = await d.foreign.waitForLine(/^ready /);
    const adopted3 = (/adopted=(\S*)/.exec(ready3)?.[1] ?? "").split(",");
    ctx.check("after a cgroup.kill with no drain, the next module's server adopted the gated tasks again", ["exits-7-later", "trap-on-exit"].every((id) => adopted3.includes(id)), ready3);

    writeFileSync(release, "");
    ctx.mark("release", "the gated tasks may end");
    for (const t of tasks) {
      const done = await d.foreign.waitForLine(`completion ${t.id} `, 30_000);
      ctx.check(`${t.id} ${t.state} ${t.exitCode}, reported by the module running when it ended`, done === `completion ${t.id} ${t.state} ${t.exitCode}`, done);
      await d.foreign.waitForLine(`acked ${t.id}`, 10_000);
    }
    const ticks = Array.from({ length: TICKS }, (_, i) => `tick ${i + 1}\n`).join("");
    ctx.check(`steady-output has all ${TICKS} lines, none lost across the restart`, ctx.output("steady-output") === ticks, ctx.output("steady-output").slice(-200));
    ctx.check("exits-7-later has its whole output", ctx.output("exits-7-later") === "compiling\nfailed\n", ctx.output("exits-7-later"));
    ctx.check("trap-on-exit's EXIT trap ran", ctx.output("trap-on-exit") === "serving\ncleanup ran\n", ctx.output("trap-on-exit"));

    // One more restart: a task run through the fourth module marks the point by which any
    // redelivery of an acknowledged completion would have come.
    await d.restart("restart");
    await d.foreign.waitForLine(/^ready /);
    d.foreign.send("run marker true");
    await d.foreign.waitForLine("acked marker", 30_000);
    const counts = Object.fromEntries(tasks.map((t) => [t.id, completionsOf(t.id)]));
    for (const [id, seen] of Object.entries(counts)) for (let i = 0; i < seen.length; i++) ctx.deliveries.push({ storage: ctx.storage, id });
    ctx.check("each completion was delivered exactly once over four modules, all by the third", Object.values(counts).every((seen) => seen.length === 1 && seen[0].startsWith("3: ")), counts);
    ctx.check("no module reported an error", d.modules.every((m) => !lines(m).some((l) => l.startsWith("error"))), d.modules.map((m) => lines(m).filter((l) => l.startsWith("error"))));
    await ctx.waitFor("the task scopes to go", async () => (await ctx.units()).length === 0, 10_000).catch(() => {});
    ctx.check("no task scope is left", (await ctx.units()).length === 0, await ctx.units());
    await d.stop("disable");
  },
});

runIfMain(import.meta.url, "sidecar-rust");
