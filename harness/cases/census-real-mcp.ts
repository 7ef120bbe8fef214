/**
 * census-real-mcp (issue 14): a stand-in harness, launched through outlive
 * (`launchAgent`, daemon mode: a systemd user scope of its own), whose
 * `.mcp.json` names a real MCP server from the npm registry the way users
 * configure it: `npx -y @modelcontextprotocol/server-memory@VERSION` (pinned,
 * as the project's own installed version, so npx needs no registry lookup
 * and runs it offline from the project's node_modules). The harness
 * speaks MCP to it (initialize), and starts a dev server that did setsid
 * and was double-forked (ppid 1, a session and group of its own). The
 * census recognises the server through npm's rewritten title (what runs
 * under npx is the server's), finds the dev server only through the
 * harness's cgroup and keeps the harness up for it (named), through a
 * supervisor restart; once it ends the harness is retired, and its
 * retirement leaves nothing in its scope.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { $ } from "zx";
import { classifyMembers, isRunning, launchAgent, mayRetireAgent, retireIdleAgent, Supervisor, takeCensus } from "../../lib/internal.ts";
import { projectRoot } from "../shared/project-root.ts";
import { brief, censusRun, cliCensus, writtenPid } from "../inside/kits/census-kit.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

const PACKAGE = "@modelcontextprotocol/server-memory";
/** Where the container finds npm (bound from the host beside its Node, or copied into the image). */
const NPX_CLI = "/usr/local/lib/node_modules/npm/bin/npx-cli.js";

/** The harness: starts its children, speaks MCP `initialize` to the first over stdio, reports, idles. */
const HARNESS_JS = `const { spawn } = require("node:child_process");
const { renameSync, writeFileSync } = require("node:fs");
const [plans, report] = [JSON.parse(process.argv[2]), process.argv[3]];
const kids = plans.map((p, i) => spawn(p.argv[0], p.argv.slice(1), { stdio: i === 0 ? ["pipe", "pipe", "ignore"] : "ignore" }));
for (const k of kids) k.on("error", () => {});
const mcp = kids[0];
let text = "";
mcp.stdout.on("data", (chunk) => {
  text += chunk;
  const line = text.split("\\n").find((l) => l.includes('"id":1'));
  if (!line) return;
  writeFileSync(report + ".tmp", JSON.stringify({ pid: process.pid, children: kids.map((k) => k.pid), initialize: JSON.parse(line) }));
  renameSync(report + ".tmp", report);
});
mcp.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "stand-in-harness", version: "1" } } }) + "\\n");
setInterval(() => {}, 60000);
`;

const scenario = defineScenario({
  name: "census-real-mcp",
  summary: "a harness launched through outlive with a real npm MCP server (npx) is kept up by a setsid + double-forked dev server found in its cgroup, and retires leaving its scope empty",
  timeoutMs: 120_000,
  inside: (ctx) =>
    censusRun(ctx, async ({ files, started }) => {
      if (!existsSync(NPX_CLI)) ctx.skip(`no npm in the container (${NPX_CLI}): the container binds or copies the host's npm beside Node`);
      if (!existsSync(join(projectRoot(), "node_modules", PACKAGE, "package.json"))) ctx.skip(`${PACKAGE} is not installed in the project (npm ci installs it as a devDependency)`);
      const version = (JSON.parse(readFileSync(join(projectRoot(), "node_modules", PACKAGE, "package.json"), "utf8")) as { version: string }).version;
      const spec = `${PACKAGE}@${version}`;
      const cwd = join(files.root, "project");
      const home = join(files.root, "home");
      mkdirSync(cwd, { recursive: true });
      mkdirSync(home, { recursive: true });
      // A user's project that installed the server: npm takes the nearest folder with a package.json as the project.
      writeFileSync(join(cwd, "package.json"), JSON.stringify({ name: "app", private: true, devDependencies: { [PACKAGE]: version } }));
      symlinkSync(join(projectRoot(), "node_modules"), join(cwd, "node_modules"));
      // npx as npm installs it: a link to npx-cli.js on PATH, run through its `#!/usr/bin/env node`.
      symlinkSync(NPX_CLI, join(files.bin, "npx"));
      const harnessJs = join(files.root, "mcp-harness.cjs");
      writeFileSync(harnessJs, HARNESS_JS);
      writeFileSync(join(cwd, ".mcp.json"), JSON.stringify({ mcpServers: { memory: { command: "npx", args: ["-y", spec] } } }));
      const devJs = join(cwd, "dev-server.cjs");
      writeFileSync(devJs, "setInterval(() => {}, 1000);\n");
      const devPidFile = join(cwd, "dev.pid");
      const report = join(files.root, "mcp-harness.json");
      // The package is the project's own (cwd is inside it) at the pinned version, so npx runs it offline from node_modules.
      const env = {
        PATH: `${files.bin}:${process.env.PATH}`,
        HOME: home,
        npm_config_cache: join(home, ".npm"),
        npm_config_offline: "true",
        npm_config_update_notifier: "false",
        MEMORY_FILE_PATH: join(home, "memory.jsonl"),
      };
      const plans = [
        { argv: ["npx", "-y", spec] },
        { argv: ["/bin/sh", "-c", `( setsid sh -c 'echo $$ > ${devPidFile}; exec node ${devJs}' & ) ; exit 0`] },
      ];
      const storage = ctx.storageFor("harness");
      const open = () => Supervisor.open({ storage, mode: "daemon", prefix: ctx.prefix, log: (l) => ctx.log(l) });
      let sup = await open();
      ctx.fact("placement", sup.placementReason);
      const { task, launchRecord } = await launchAgent(sup, { agent: "claude-code", argv: [process.execPath, harnessJs, JSON.stringify(plans), report], cwd, env });
      if (task.pid) started.add(task.pid);
      ctx.fact("task", { id: task.id, pid: task.pid, location: task.location });
      ctx.fact("launchRecord", launchRecord);
      ctx.check("the task runs in a scope of its own", /-task-.*\.scope$/.test(task.location.cgroup ?? ""), task.location);
      ctx.check(
        "the launch record names the npm server as configured",
        launchRecord.known && launchRecord.servers.length === 1 && launchRecord.servers[0].command === "npx" && launchRecord.servers[0].args.join(" ") === `-y ${spec}`,
        launchRecord,
      );

      const seen = await ctx.waitFor("the MCP server's initialize reply", () => existsSync(report) && readFileSync(report, "utf8"), 60_000);
      const h = JSON.parse(seen) as { pid: number; children: number[]; initialize: { result?: { serverInfo?: { name?: string } } } };
      started.add(h.pid);
      for (const k of h.children) started.add(k);
      ctx.check("the real MCP server answered initialize", h.initialize.result?.serverInfo?.name === "memory-server", h.initialize);
      const dev = await ctx.waitFor("the dev server's pid", () => writtenPid(devPidFile) ?? undefined, 10_000);
      started.add(dev);

      const [npxPid] = h.children;
      const census = await takeCensus({ pid: h.pid }, { cgroup: { path: task.location.cgroup! } });
      const roles = census.ok ? classifyMembers(census.census, launchRecord.servers) : [];
      for (const m of roles) started.add(m.process.pid);
      ctx.fact("census", roles.map((m) => ({ pid: m.process.pid, ppid: m.process.ppid, argv: m.process.argv.filter((a) => a !== ""), why: m.why, role: m.role })));
      const npxRole = roles.find((m) => m.process.pid === npxPid);
      ctx.check("npx (as npm retitled it) is recognised as the server", npxRole?.role.kind === "server" && npxRole.process.argv[0] === `npm exec ${spec}`, npxRole);
      const serverNode = roles.find((m) => m.process.argv.some((a) => a.endsWith("/mcp-server-memory")));
      ctx.check("the server's node process under npx is the server's own", serverNode?.role.kind === "servers-own", serverNode);
      const devRole = roles.find((m) => m.process.pid === dev);
      ctx.check("the setsid + double-forked dev server is found only in the cgroup", devRole?.why === "cgroup-member" && devRole.process.ppid !== h.pid, devRole);

      const busy = await mayRetireAgent(sup, task.id);
      ctx.fact("whileDevServerRuns", { ...busy, decision: brief(busy.decision) });
      ctx.check("kept while the dev server runs, and it is named", busy.decision.verdict === "keep" && busy.decision.blocking?.pid === dev && busy.decision.blocking.why === "cgroup-member", brief(busy.decision));

      // The supervisor restarts; the CLI (each call a supervisor of its own) sees the same.
      await sup.drain("restart");
      const cli = await cliCensus(h.pid);
      const cliDev = cli.json?.members?.find((m: { pid: number }) => m.pid === dev);
      ctx.check("outlive census names the dev server as a cgroup member", cliDev?.why === "cgroup-member" && /-task-.*\.scope$/.test(cli.json?.sources?.cgroup ?? ""), cli.json?.sources ?? cli.stderr);
      const flags = ["--storage", storage, "--mode", "daemon", "--prefix", ctx.prefix];
      const dry = await $({ nothrow: true, quiet: true, timeout: "30s" })`node ${join(projectRoot(), "dist/scripts/outlive.js")} agent retire ${task.id} --dry-run ${flags}`;
      ctx.check("outlive agent retire --dry-run keeps it (exit 3), naming the dev server", dry.exitCode === 3 && dry.stdout.includes(`pid ${dev} `), { code: dry.exitCode, out: dry.stdout, err: dry.stderr });
      sup = await open();
      try {
        const adopted = await mayRetireAgent(sup, task.id);
        ctx.check("after the restart the adopted harness has its launch record and is still kept", adopted.launchRecordFound && adopted.decision.blocking?.pid === dev, { ...adopted, decision: brief(adopted.decision) });

        process.kill(dev, "SIGTERM");
        ctx.mark("kill", "dev server stopped");
        await ctx.waitFor("the dev server to end", () => !isRunning(dev), 10_000);
        const before = census.ok ? census.census.members.map((m) => m.process.pid).filter((pid) => pid !== dev) : [];
        const retired = await retireIdleAgent(sup, task.id, { graceMs: 1000 });
        ctx.fact("retired", { ...retired, decision: brief(retired.decision), killed: retired.killed?.record.state });
        ctx.check("retired once only its MCP server ran under it", retired.decision.verdict === "retire" && retired.decision.servers.some((s) => s.pid === npxPid && s.server === "memory"), brief(retired.decision));
        ctx.check("the task ends as killed", retired.killed?.record.state === "killed", retired.killed?.record);
        await ctx.waitFor("the harness, npx and the server to end", () => [h.pid, ...before].every((pid) => !isRunning(pid)), 15_000).catch(() => false);
        ctx.check("nothing of the harness is left running", [h.pid, ...before].every((pid) => !isRunning(pid)), [h.pid, ...before].filter(isRunning));
        const scope = join("/sys/fs/cgroup", task.location.cgroup!);
        const procs = existsSync(join(scope, "cgroup.procs")) ? readFileSync(join(scope, "cgroup.procs"), "utf8").trim() : "";
        ctx.check("its scope holds nothing (or is gone)", procs === "", { scope, procs });
      } finally {
        await sup.close();
      }
    }),
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
