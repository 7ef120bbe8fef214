/**
 * census-setsid-child (issue 5): work that left the harness's session or
 * tree still keeps an idle harness up. A child that did setsid is found by
 * the parent chain; a double-forked worker that kept the harness's process
 * group (its parent exited, so init's subreaper adopted it) is found as a
 * group member. The census names each, with why; once each has ended the
 * harness may retire. Library (`mayRetireIdle`) and `outlive census --json`.
 */
import { join } from "node:path";
import { isRunning, mayRetireIdle, readLaunchRecord, readProcStat } from "../../lib/internal.ts";
import { brief, censusRun, cliCensus, startFakeHarness, waitForArgv, writtenPid } from "../inside/kits/census-kit.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const scenario = defineScenario({
  name: "census-setsid-child",
  summary: "a setsid child (child chain) and a double-forked group member keep an idle harness up, named; it may retire once they end",
  inside: (ctx) =>
    censusRun(ctx, async ({ files, started }) => {
      const cwd = files.root;
      const env = { ...process.env };
      // No MCP servers configured: the record is known and empty, so anything under the harness is real work.
      const record = await readLaunchRecord({ agent: "claude-code", argv: ["claude", "--strict-mcp-config"], cwd, env });
      ctx.check("the launch record is known and names no server", record.known && record.servers.length === 0, record);
      const cliArgs = ["--strict-mcp-config", "--cwd", cwd];

      // 1. A child that did setsid: another session and group, still the harness's child.
      const h1 = await startFakeHarness(ctx, files, [{ argv: ["sleep", "300"], setsid: true }], { cwd, env, started });
      const escaped = h1.children[0];
      await waitForArgv(ctx, escaped, ["sleep", "300"]);
      const own = readProcStat(h1.pid)!;
      const its = readProcStat(escaped)!;
      ctx.check("the child is in a session and group of its own", its.sid === escaped && its.pgid === escaped && its.sid !== own.sid, { harness: own, child: its });
      const lib1 = await mayRetireIdle(h1, record);
      ctx.fact("setsidChild", { harness: h1, lib: lib1 });
      ctx.check("lib: the setsid child keeps the harness up, named as child chain",
        lib1.verdict === "keep" && lib1.blocking?.pid === escaped && lib1.blocking.why === "child-chain", brief(lib1));
      const cli1 = await cliCensus(h1.pid, cliArgs);
      const member = cli1.json?.members?.find((m: { pid: number }) => m.pid === escaped);
      ctx.check("cli: keep, and the member list says child-chain with its own session", cli1.decision?.verdict === "keep" && member?.why === "child-chain" && member?.sid === escaped, { cli: cli1.json, stderr: cli1.stderr });

      process.kill(escaped, "SIGKILL");
      ctx.mark("kill", "setsid child ended");
      await ctx.waitFor("the setsid child to end", () => !isRunning(escaped), 10_000);
      const lib1b = await mayRetireIdle(h1, record);
      const cli1b = await cliCensus(h1.pid, cliArgs);
      ctx.check("lib: retire once the setsid child has ended", lib1b.verdict === "retire", brief(lib1b));
      ctx.check("cli: retire once the setsid child has ended", cli1b.decision?.verdict === "retire", cli1b.json ?? cli1b.stderr);

      // 2. A double fork that kept the group: the shell exits, its sleep is reparented away from the harness.
      const pidFile = join(files.root, "double-fork.pid");
      const h2 = await startFakeHarness(ctx, files, [{ argv: ["sh", "-c", `sleep 301 & echo $! > ${pidFile}`] }], { cwd, env, started });
      const orphan = await ctx.waitFor("the double-forked sleep's pid", () => !isRunning(h2.children[0]) && (writtenPid(pidFile) ?? false), 10_000);
      started.add(orphan);
      const orphanStat = readProcStat(orphan)!;
      ctx.check("the worker is no longer the harness's descendant, but is in its group", orphanStat.ppid !== h2.pid && orphanStat.pgid === h2.pid, orphanStat);
      const lib2 = await mayRetireIdle(h2, record);
      ctx.fact("doubleFork", { harness: h2, orphan: orphanStat, lib: lib2 });
      ctx.check("lib: the double-forked worker keeps the harness up, named as group member",
        lib2.verdict === "keep" && lib2.blocking?.pid === orphan && lib2.blocking.why === "group-member", brief(lib2));
      const cli2 = await cliCensus(h2.pid, cliArgs);
      const member2 = cli2.json?.members?.find((m: { pid: number }) => m.pid === orphan);
      ctx.check("cli: keep, and the member list says group-member", cli2.decision?.verdict === "keep" && member2?.why === "group-member", { cli: cli2.json, stderr: cli2.stderr });

      process.kill(orphan, "SIGKILL");
      ctx.mark("kill", "double-forked worker ended");
      await ctx.waitFor("the double-forked worker to end", () => !isRunning(orphan), 10_000);
      const lib2b = await mayRetireIdle(h2, record);
      const cli2b = await cliCensus(h2.pid, cliArgs);
      ctx.check("lib: retire once the group member has ended", lib2b.verdict === "retire", brief(lib2b));
      ctx.check("cli: retire once the group member has ended", cli2b.decision?.verdict === "retire", cli2b.json ?? cli2b.stderr);

      // 3. Left both: setsid and a double fork. Neither chain nor group reaches it (the census's documented scope); recorded, not judged.
      const gonePidFile = join(files.root, "gone.pid");
      const h3 = await startFakeHarness(ctx, files, [{ argv: ["sh", "-c", `setsid sh -c 'sleep 302 & echo $! > ${gonePidFile}'`] }], { cwd, env, started });
      const gone = await ctx.waitFor("the fully escaped sleep's pid", () => writtenPid(gonePidFile) ?? false, 10_000);
      started.add(gone);
      await ctx.waitFor("the escaping shells to exit", () => !isRunning(h3.children[0]), 10_000);
      ctx.fact("escapedBothTreeAndGroup", { pid: gone, stat: readProcStat(gone), decision: brief(await mayRetireIdle(h3, record)) });
    }),
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
