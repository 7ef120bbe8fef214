/**
 * census-dev-server (issue 5): a fake agent harness in the container with an
 * MCP server child (started exactly as its --mcp-config says) and a dev
 * server grandchild (under a shell the harness started). The census must say
 * "keep" while the dev server runs, naming it, and "retire" once only the
 * MCP server remains — both through `outlive census PID --json` and
 * through the library's `mayRetireIdle`.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { $ } from "zx";
import { mayRetireIdle, readLaunchRecord, readProcStat } from "../../lib/mod.ts";
import { projectRoot } from "../module-client.ts";
import { defineScenario } from "../scenario/define.ts";
import { runIfMain } from "../scenario/run-file.ts";

const FOREVER = "setInterval(() => {}, 1000);";

const scenario = defineScenario({
  name: "census-dev-server",
  summary: "an idle harness is kept while its dev server runs, and may retire once only its MCP server remains",
  async inside(ctx) {
    const dir = ctx.runDir;
    const mcp = join(dir, "mcp-server.js");
    const dev = join(dir, "dev-server.js");
    const harness = join(dir, "fake-harness.js");
    const config = join(dir, "mcp.json");
    writeFileSync(mcp, FOREVER);
    writeFileSync(dev, FOREVER);
    writeFileSync(config, JSON.stringify({ mcpServers: { files: { command: "node", args: [mcp, "--stdio"] } } }));
    // The harness starts its MCP server as configured, and a shell that runs the dev server (a grandchild).
    writeFileSync(harness, `
      const { spawn } = require("node:child_process");
      spawn("node", [${JSON.stringify(mcp)}, "--stdio"], { stdio: "ignore" });
      spawn("/bin/sh", ["-c", "node ${dev}; echo dev server ended"], { stdio: "ignore" });
      ${FOREVER}
    `.replace(/^\s+/gm, ""));
    writeFileSync(join(dir, "package.json"), '{"type":"commonjs"}');

    const argv = ["node", harness, "--strict-mcp-config", "--mcp-config", config];
    const record = await readLaunchRecord({ harness: "claude-code", argv: ["claude", "--strict-mcp-config", "--mcp-config", config], cwd: dir, env: process.env });
    ctx.fact("launchRecord", record);
    ctx.check("the launch record names the one MCP server", record.servers.length === 1, record.servers);
    const child = spawn(argv[0], argv.slice(1), { cwd: dir, detached: true, stdio: "ignore" });
    const leaderPid = child.pid!;
    try {
      await ctx.waitFor("the dev server to start", async () => (await $({ nothrow: true, quiet: true })`pgrep -f ${dev}`).stdout.trim() !== "", 10_000);
      await ctx.sleep(300);
      const leader = { pid: leaderPid, startTime: readProcStat(leaderPid)!.startTime };
      const cli = (): Promise<{ decision: { verdict: string; blocking?: { pid: number; argv: string[] } } }> =>
        $({ nothrow: true, quiet: true, timeout: "20s" })`node ${join(projectRoot(), "dist/scripts/outlive.js")} census ${leaderPid} --json --strict-mcp-config --mcp-config ${config} --cwd ${dir}`
          .then((r) => JSON.parse(r.stdout));

      const busy = await mayRetireIdle(leader, record);
      const busyCli = await cli();
      ctx.fact("whileDevServerRuns", { lib: busy, cli: busyCli.decision });
      ctx.check("lib: keep while the dev server runs", busy.verdict === "keep", busy);
      ctx.check("cli: keep while the dev server runs", busyCli.decision?.verdict === "keep", busyCli.decision);
      const blocking = busy.verdict === "keep" && "blocking" in busy ? busy.blocking : undefined;
      ctx.check("the blocking process is the dev server or the shell running it", blocking !== undefined && (blocking.argv.includes(dev) || blocking.argv.join(" ").includes(dev)), blocking);

      const devPid = Number((await $({ nothrow: true, quiet: true })`pgrep -f ^node.${dev}`).stdout.trim().split("\n")[0]);
      process.kill(devPid, "SIGTERM");
      ctx.mark("kill", "dev server stopped");
      await ctx.waitFor("the dev server's shell to end", async () => (await $({ nothrow: true, quiet: true })`pgrep -f ${dev}`).stdout.trim() === "", 10_000);
      const idle = await mayRetireIdle(leader, record);
      const idleCli = await cli();
      ctx.fact("onlyMcpLeft", { lib: idle, cli: idleCli.decision });
      ctx.check("lib: retire once only the MCP server remains", idle.verdict === "retire", idle);
      ctx.check("cli: retire once only the MCP server remains", idleCli.decision?.verdict === "retire", idleCli.decision);
    } finally {
      try {
        process.kill(-leaderPid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  },
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
