/**
 * census-dev-server (issue 5): a fake agent harness in the container with an
 * MCP server child (started exactly as its --mcp-config says) and a dev
 * server grandchild (under a shell the harness started). The census must say
 * "keep" while the dev server runs, naming it, and "retire" once only the
 * MCP server remains — both through `outlive census PID --json` and
 * through the library's `mayRetireIdle`.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { isRunning, mayRetireIdle, readLaunchRecord, takeSnapshot } from "../../lib/internal.ts";
import { brief, censusRun, cliCensus, startFakeHarness, waitForArgv } from "../inside/kits/census-kit.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const scenario = defineScenario({
  name: "census-dev-server",
  summary: "an idle harness is kept while its dev server runs, and may retire once only its MCP server remains",
  inside: (ctx) =>
    censusRun(ctx, async ({ files, started }) => {
      const cwd = files.root;
      const env = { ...process.env };
      const server = join(files.bin, "server.js");
      const dev = join(cwd, "dev-server.js");
      const config = join(cwd, "mcp.json");
      writeFileSync(dev, "setInterval(() => {}, 1000);");
      writeFileSync(config, JSON.stringify({ mcpServers: { files: { command: "node", args: [server, "--stdio"] } } }));
      const record = await readLaunchRecord({ agent: "claude-code", argv: ["claude", "--strict-mcp-config", "--mcp-config", config], cwd, env });
      ctx.fact("launchRecord", record);
      ctx.check("the launch record names the one MCP server", record.servers.length === 1, record);

      // The harness starts its MCP server as configured, and a shell that runs the dev server (a grandchild).
      const h = await startFakeHarness(ctx, files, [{ argv: ["node", server, "--stdio"] }, { argv: ["/bin/sh", "-c", `node ${dev}; echo dev server ended`] }], { cwd, env, started });
      const [serverPid, shellPid] = h.children;
      const devPid = await ctx.waitFor("the dev server to start", async () =>
        (await takeSnapshot()).processes.find((p) => p.ppid === shellPid && p.argv.join(" ") === `node ${dev}`)?.pid, 10_000);
      await waitForArgv(ctx, serverPid, ["node", server, "--stdio"]);
      ctx.fact("harness", { ...h, server: serverPid, shell: shellPid, devServer: devPid });
      const cliArgs = ["--strict-mcp-config", "--mcp-config", config, "--cwd", cwd];

      const busy = await mayRetireIdle(h, record);
      const busyCli = await cliCensus(h.pid, cliArgs);
      ctx.fact("whileDevServerRuns", { lib: brief(busy), cli: brief(busyCli.decision) });
      ctx.check("lib: keep while the dev server runs", busy.verdict === "keep", brief(busy));
      ctx.check("cli: keep while the dev server runs", busyCli.decision?.verdict === "keep", busyCli.json ?? busyCli.stderr);
      const blocking = busy.verdict === "keep" ? busy.blocking?.pid : undefined;
      ctx.check("the blocking process is the dev server or the shell running it", blocking === devPid || blocking === shellPid, brief(busy));

      process.kill(devPid, "SIGTERM");
      ctx.mark("kill", "dev server stopped");
      await ctx.waitFor("the dev server's shell to end", () => !isRunning(devPid) && !isRunning(shellPid), 10_000);
      const idle = await mayRetireIdle(h, record);
      const idleCli = await cliCensus(h.pid, cliArgs);
      ctx.fact("onlyMcpLeft", { lib: brief(idle), cli: brief(idleCli.decision) });
      ctx.check("lib: retire once only the MCP server remains", idle.verdict === "retire" && idle.servers.some((s) => s.pid === serverPid), brief(idle));
      ctx.check("cli: retire once only the MCP server remains", idleCli.decision?.verdict === "retire", idleCli.json ?? idleCli.stderr);
    }),
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
