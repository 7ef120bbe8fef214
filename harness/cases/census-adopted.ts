/**
 * census-adopted (issue 5): a harness outlives the daemon that started it
 * (that daemon read its launch record, spawned it in a group of its own,
 * and exited); the next daemon has no launch record for it. Then even its
 * configured MCP server keeps it up: it may be retired only when nothing at
 * all runs under it. A zombie child (never reaped by the harness) is
 * nothing. Library (`mayRetireIdle(leader, null)`) and `outlive census --adopted --json`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { isRunning, mayRetireIdle, readLaunchRecord, readProcStat, takeSnapshot } from "../../lib/internal.ts";
import { brief, censusRun, cliCensus, startFakeHarness, waitForArgv } from "../inside/kits/census-kit.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import { UNREAPED_CHILD } from "../inside/kits/unreaped-child.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const scenario = defineScenario({
  name: "census-adopted",
  summary: "a harness with no launch record (adopted after a daemon restart) is kept even for an MCP server, retired only when nothing runs under it",
  inside: (ctx) =>
    censusRun(ctx, async ({ files, started }) => {
      const cwd = files.root;
      const env = { ...process.env, PATH: `${files.bin}:${process.env.PATH}` };
      const server = join(files.bin, "fake-mcp");
      writeFileSync(join(cwd, ".mcp.json"), JSON.stringify({ mcpServers: { files: { command: server, args: ["--stdio"] } } }));
      // The first daemon: reads the record just before the spawn, then starts the harness through a
      // shell that exits at once (so the harness is reparented, as after the daemon's restart). The
      // shell's child (UNREAPED_CHILD) is left to the harness, which never reaps it: a zombie child.
      const record = await readLaunchRecord({ agent: "claude-code", argv: ["claude"], cwd, env });
      ctx.check("the first daemon's launch record names the server", record.known && record.servers.map((s) => s.name).join() === "files", record);
      const h = await startFakeHarness(ctx, files, [{ argv: [server, "--stdio"] }], { cwd, env, started, prefix: UNREAPED_CHILD, orphaned: true });
      const serverPid = h.children[0];
      await waitForArgv(ctx, serverPid, ["node", server, "--stdio"]);
      const zombie = await ctx.waitFor("the harness's unreaped zombie child", async () =>
        (await takeSnapshot()).processes.find((p) => p.ppid === h.pid && p.state === "Z")?.pid, 10_000);
      ctx.fact("harness", { ...h, zombie, server: serverPid });

      const withRecord = await mayRetireIdle(h, record);
      ctx.check("with the first daemon's record: retire (only its server runs)", withRecord.verdict === "retire" && withRecord.servers.some((s) => s.pid === serverPid), brief(withRecord));

      // 2. The first daemon is gone: the harness is now another process's child, and the next daemon has no record.
      ctx.mark("restart", "daemon restarted: no launch record");
      const parent = readProcStat(h.pid)!.ppid;
      const own = readProcStat(h.pid)!;
      ctx.check("the harness outlived the shell that started it, in a group of its own", parent !== process.pid && own.pgid === h.pid, { ppid: parent, pgid: own.pgid });
      const adopted = await mayRetireIdle(h, null);
      ctx.check("lib, no record: its MCP server keeps it up, named", adopted.verdict === "keep" && adopted.blocking?.pid === serverPid && adopted.blocking.why === "child-chain", brief(adopted));
      const cli = await cliCensus(h.pid, ["--adopted"]);
      ctx.check("cli --adopted: keep, naming the server", cli.decision?.verdict === "keep" && cli.decision.blocking?.pid === serverPid, cli.json ?? cli.stderr);
      const cliRecord = await cliCensus(h.pid, ["--cwd", cwd]);
      ctx.check("cli with the configs: retire (the same server is recognised)", cliRecord.decision?.verdict === "retire", cliRecord.json ?? cliRecord.stderr);

      // 3. The server ends: nothing runs under it but the zombie, which is nothing.
      process.kill(serverPid, "SIGKILL");
      ctx.mark("kill", "MCP server ended");
      await ctx.waitFor("the server to end", () => !isRunning(serverPid), 10_000);
      ctx.check("the zombie child is still there", readProcStat(zombie)?.state === "Z", readProcStat(zombie));
      const idle = await mayRetireIdle(h, null);
      ctx.check("lib, no record: retire once nothing runs under it (the zombie is nothing)", idle.verdict === "retire" && idle.servers.length === 0, brief(idle));
      const cliIdle = await cliCensus(h.pid, ["--adopted"]);
      ctx.check("cli --adopted: retire, and the zombie is not listed", cliIdle.decision?.verdict === "retire" && cliIdle.json?.members?.length === 0, cliIdle.json ?? cliIdle.stderr);
    }),
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
