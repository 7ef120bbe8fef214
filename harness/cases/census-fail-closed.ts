/**
 * census-fail-closed (issue 5): where the census cannot be sure whose
 * processes it sees, it gives no answer and the harness stays up, with the
 * reason. (1) The recorded start time is not the one the pid has now (the
 * pid names another process): no answer, though that process is idle.
 * (2) The leader exited and nobody reaped it (a zombie) while its group
 * still runs a worker: no answer. (3) A harness spawned without a group of
 * its own shares the caller's group: that group is never taken, so the
 * caller's other children neither keep the harness up nor count as its.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { isRunning, mayRetireIdle, readLaunchRecord, readProcStat, takeSnapshot, underLeader } from "../../lib/internal.ts";
import { brief, censusRun, cliCensus, startFakeHarness, waitForArgv, writtenPid } from "../inside/kits/census-kit.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const scenario = defineScenario({
  name: "census-fail-closed",
  summary: "a leader whose start time changed, or a zombie leader, gives no answer (keep, with the reason); the caller's own group is never taken",
  inside: (ctx) =>
    censusRun(ctx, async ({ files, started }) => {
      const cwd = files.root;
      const env = { ...process.env };
      const record = await readLaunchRecord({ agent: "claude-code", argv: ["claude", "--strict-mcp-config"], cwd, env });
      const cliArgs = ["--strict-mcp-config", "--cwd", cwd];

      // 1. Identity: the daemon recorded harness A (pid, start time); that pid now names idle harness B.
      //    Pids are not reused on demand, so B's pid is paired with A's real start time.
      const a = await startFakeHarness(ctx, files, [], { cwd, env, started });
      process.kill(a.pid, "SIGKILL");
      await ctx.waitFor("harness A to end", () => !isRunning(a.pid), 10_000);
      await ctx.sleep(20); // a tick (10 ms) apart at least, so A's and B's start times differ
      const b = await startFakeHarness(ctx, files, [], { cwd, env, started });
      ctx.check("A and B started at different ticks", a.startTime !== b.startTime, { a, b });
      const stale = { pid: b.pid, startTime: a.startTime };
      const truthful = await mayRetireIdle(b, record);
      ctx.check("control: B's true identity answers (retire: nothing runs under it)", truthful.verdict === "retire", brief(truthful));
      const changed = await mayRetireIdle(stale, record);
      ctx.check("lib: another start time under the pid gives no answer", changed.verdict === "keep" && changed.reason?.code === "leader-identity-changed", brief(changed));
      const cliChanged = await cliCensus(b.pid, ["--start-time", a.startTime, ...cliArgs]);
      ctx.check("cli --start-time: no answer (exit 1, leader-identity-changed, decision keep)",
        cliChanged.exitCode === 1 && cliChanged.json?.error?.code === "leader-identity-changed" && cliChanged.decision?.verdict === "keep", { ...cliChanged });
      const cliTrue = await cliCensus(b.pid, ["--start-time", b.startTime, ...cliArgs]);
      ctx.check("cli --start-time with the true ticks: retire", cliTrue.exitCode === 0 && cliTrue.decision?.verdict === "retire", { ...cliTrue });

      // 2. A zombie leader: its parent never reaps it (it exec'd sleep), and the worker it left runs in its group.
      const pidFile = join(files.root, "zombie-leader.pid");
      const reaper = spawn("/bin/sh", ["-c", `setsid sh -c 'sleep 303 & sleep 0.3; exit 0' & echo $! > ${pidFile}; exec sleep 300`], { stdio: "ignore", detached: true });
      reaper.on("error", () => {});
      started.add(reaper.pid!);
      const leader = await ctx.waitFor("the leader's pid", () => writtenPid(pidFile) ?? false, 10_000);
      started.add(leader);
      const leaderStart = readProcStat(leader)?.startTime ?? null;
      await ctx.waitFor("the leader to become a zombie", () => readProcStat(leader)?.state === "Z", 10_000);
      const snapshot = await takeSnapshot();
      const worker = snapshot.processes.find((p) => p.pgid === leader && p.pid !== leader && p.state !== "Z");
      if (worker) started.add(worker.pid);
      ctx.fact("zombieLeader", { leader, leaderStart, worker, parent: readProcStat(leader)?.ppid, reaper: reaper.pid });
      ctx.check("the zombie leader's group still runs its worker", worker?.argv.join(" ") === "sleep 303", worker);
      const zombie = await mayRetireIdle({ pid: leader, startTime: leaderStart }, record, { snapshot });
      ctx.check("lib: a zombie leader gives no answer (keep: leader-zombie)", zombie.verdict === "keep" && zombie.reason?.code === "leader-zombie", brief(zombie));
      const cliZombie = await cliCensus(leader, cliArgs);
      ctx.check("cli: a zombie leader gives no answer (exit 1, leader-zombie, decision keep)",
        cliZombie.exitCode === 1 && cliZombie.json?.error?.code === "leader-zombie" && cliZombie.decision?.verdict === "keep", { ...cliZombie });

      // 3. The caller's own group: a harness spawned without a group of its own, beside another child of the caller.
      const ownPgid = readProcStat(process.pid)!.pgid;
      const sibling = spawn("sleep", ["304"], { stdio: "ignore" });
      sibling.on("error", () => {});
      started.add(sibling.pid!);
      const h = await startFakeHarness(ctx, files, [{ argv: ["sleep", "305"] }], { cwd, env, started, detached: false });
      await waitForArgv(ctx, sibling.pid!, ["sleep", "304"]);
      await waitForArgv(ctx, h.children[0], ["sleep", "305"]);
      ctx.check("the harness and the sibling share the caller's group", readProcStat(h.pid)?.pgid === ownPgid && readProcStat(sibling.pid!)?.pgid === ownPgid, { ownPgid });
      const census = underLeader(await takeSnapshot(), h);
      const members = census.ok ? census.census.members.map((m) => ({ pid: m.process.pid, why: m.why })) : census.error;
      ctx.fact("callersGroup", { caller: process.pid, ownPgid, harness: h, sibling: sibling.pid, members });
      ctx.check("lib: the caller's group is not taken; only the harness's own child is under it",
        census.ok && !census.census.groupTaken && census.census.members.length === 1 && census.census.members[0].process.pid === h.children[0], members);
      const busy = await mayRetireIdle(h, record);
      ctx.check("lib: the harness's child keeps it up (child chain)", busy.verdict === "keep" && busy.blocking?.pid === h.children[0], brief(busy));
      process.kill(h.children[0], "SIGKILL");
      await ctx.waitFor("the harness's child to end", () => !isRunning(h.children[0]), 10_000);
      const idle = await mayRetireIdle(h, record);
      ctx.check("lib: retire, though the caller and its other child run in the same group", idle.verdict === "retire" && isRunning(sibling.pid!), brief(idle));
      // The CLI runs as the caller's child in the caller's group, so for it too that group is its own.
      const cli = await cliCensus(h.pid, cliArgs);
      ctx.check("cli: groupTaken false, no member, retire", cli.json?.groupTaken === false && cli.json?.members?.length === 0 && cli.decision?.verdict === "retire", cli.json ?? cli.stderr);
    }),
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
