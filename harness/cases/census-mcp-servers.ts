/**
 * census-mcp-servers (issue 5): MCP servers started the way real configs
 * say, read just before the spawn. Claude Code: `.mcp.json` in the folder
 * (a server by absolute path, one by bare name found through a relative
 * entry of the harness's PATH) and a relative `--mcp-config` file (a node
 * script through the interpreter, a server with a child of its own, a
 * server that re-execs under another name). Codex: `config.toml` in
 * `$CODEX_HOME`. Every server is recognised, a server's child is the
 * server's, the re-exec keeps the harness up, and editing the configs
 * after the launch changes nothing.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { classifyMembers, mayRetireIdle, readLaunchRecord, isRunning, takeSnapshot, underLeader, type IdleDecision, type LaunchInputs, type LaunchRecord } from "../../lib/internal.ts";
import { brief, censusRun, cliCensus, startFakeHarness, waitForArgv, type CensusFiles, type FakeHarness } from "../inside/kits/census-kit.ts";
import type { ScenarioContext } from "../inside/context.ts";
import { defineScenario } from "../inside/define-scenario.ts";
import { runIfMain } from "../inside/run-if-main.ts";

interface Server {
  command: string;
  args?: string[];
}

/** The servers a retire decision found running, or a record names, sorted: "a,b". */
const names = (d: IdleDecision) => (d.verdict === "retire" ? d.servers.map((s) => s.server).sort().join(",") : "");
const serverNames = (r: LaunchRecord) => r.servers.map((s) => s.name).sort().join(",");

/** The roles the census gives each process under the harness, by pid. */
async function roles(h: FakeHarness, servers: Parameters<typeof classifyMembers>[1]): Promise<Map<number, string>> {
  const census = underLeader(await takeSnapshot(), h);
  if (!census.ok) return new Map();
  return new Map(classifyMembers(census.census, servers).map((m) => [m.process.pid, m.role.kind]));
}

async function claudeCode(ctx: ScenarioContext, harnessFiles: CensusFiles, started: Set<number>) {
  const { bin } = harnessFiles;
  const cwd = join(harnessFiles.root, "project");
  mkdirSync(cwd, { recursive: true });
  // A relative PATH entry, as people write for node_modules/.bin: a script found there runs as "../bin/fake-mcp".
  const env = { ...process.env, PATH: `../bin:${process.env.PATH}`, HOME: join(harnessFiles.root, "home") };
  const dotMcp: Record<string, Server> = {
    "by-path": { command: join(bin, "fake-mcp"), args: ["--stdio"] },
    "by-name": { command: "fake-mcp", args: ["--lookup"] },
  };
  const flagged: Record<string, Server> = {
    interpreted: { command: "node", args: [join(bin, "server.js"), "--interp"] },
    "with-child": { command: "fake-mcp", args: ["--with-child"] },
    renamed: { command: join(bin, "reexec-mcp") },
  };
  writeFileSync(join(cwd, ".mcp.json"), JSON.stringify({ mcpServers: dotMcp }));
  writeFileSync(join(cwd, "servers.json"), JSON.stringify({ mcpServers: flagged }));
  const inputs: LaunchInputs = { agent: "claude-code", argv: ["claude", "--mcp-config", "servers.json"], cwd, env };
  const record = await readLaunchRecord(inputs);
  ctx.fact("claudeLaunchRecord", record);
  ctx.check("claude: the launch record names all five servers", serverNames(record) === "by-name,by-path,interpreted,renamed,with-child", record);

  // The harness starts each server exactly as configured (bare names through its PATH).
  const all = { ...dotMcp, ...flagged };
  const h = await startFakeHarness(ctx, harnessFiles, Object.values(all).map((s) => ({ argv: [s.command, ...(s.args ?? [])] })), { cwd, env, started });
  const pidOf = Object.fromEntries(Object.keys(all).map((name, i) => [name, h.children[i]]));
  await waitForArgv(ctx, pidOf["by-path"], ["node", join(bin, "fake-mcp"), "--stdio"]);
  await waitForArgv(ctx, pidOf["by-name"], ["node", "../bin/fake-mcp", "--lookup"]);
  await waitForArgv(ctx, pidOf["with-child"], ["node", "../bin/fake-mcp", "--with-child"]);
  await waitForArgv(ctx, pidOf.renamed, ["sleep", "300"]);
  const helper = await ctx.waitFor("the server's own child", async () =>
    (await takeSnapshot()).processes.find((p) => p.ppid === pidOf["with-child"] && p.argv[0] === "sleep")?.pid, 10_000);
  ctx.fact("claudeHarness", { ...h, pidOf, helper });

  const cliArgs = ["--mcp-config", "servers.json", "--cwd", cwd];
  const renamed = await mayRetireIdle(h, record);
  ctx.check("claude lib: the server that re-exec'd as sleep keeps the harness up, named", renamed.verdict === "keep" && renamed.blocking?.pid === pidOf.renamed && renamed.blocking.argv.join(" ") === "sleep 300", brief(renamed));
  const renamedCli = await cliCensus(h.pid, cliArgs);
  ctx.check("claude cli: keep, naming the re-exec'd server", renamedCli.decision?.verdict === "keep" && renamedCli.decision.blocking?.pid === pidOf.renamed, renamedCli.json ?? renamedCli.stderr);

  process.kill(pidOf.renamed, "SIGKILL");
  ctx.mark("kill", "re-exec'd server ended");
  await ctx.waitFor("the re-exec'd server to end", () => !isRunning(pidOf.renamed), 10_000);
  const role = await roles(h, record.servers);
  ctx.check("claude: by path, by PATH lookup, through node, and with a child: each a server", ["by-path", "by-name", "interpreted", "with-child"].every((n) => role.get(pidOf[n]) === "server"), Object.fromEntries(role));
  ctx.check("claude: the server's own child is the server's", role.get(helper) === "servers-own", Object.fromEntries(role));
  const idle = await mayRetireIdle(h, record);
  ctx.check("claude lib: retire once only servers (and theirs) remain", idle.verdict === "retire" && names(idle) === "by-name,by-path,interpreted,with-child", brief(idle));
  const idleCli = await cliCensus(h.pid, cliArgs);
  ctx.check("claude cli: retire", idleCli.decision?.verdict === "retire", idleCli.json ?? idleCli.stderr);

  // After the launch, both configs are emptied and one of them vouches for something else.
  writeFileSync(join(cwd, ".mcp.json"), JSON.stringify({ mcpServers: {} }));
  writeFileSync(join(cwd, "servers.json"), JSON.stringify({ mcpServers: { other: { command: "sleep", args: ["1"] } } }));
  const fresh = await readLaunchRecord(inputs);
  const freshVerdict = await mayRetireIdle(h, fresh);
  ctx.check("claude: the edit matters to a fresh read (keep)", freshVerdict.verdict === "keep", brief(freshVerdict));
  const stored = await mayRetireIdle(h, record);
  ctx.check("claude lib: with the record read at launch, the edit changes nothing (retire)", stored.verdict === "retire" && names(stored) === names(idle), brief(stored));
}

async function codex(ctx: ScenarioContext, harnessFiles: CensusFiles, started: Set<number>) {
  const { bin } = harnessFiles;
  const cwd = harnessFiles.root;
  const codexHome = join(harnessFiles.root, "codex-home");
  mkdirSync(codexHome, { recursive: true });
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, CODEX_HOME: codexHome };
  const toml = (docs: string) => `model = "o3"\n\n[mcp_servers.docs]\ncommand = "${docs}"\nargs = ["--codex"]\n\n[mcp_servers.py]\ncommand = "node"\nargs = ["${join(bin, "server.js")}", "--toml"]\n`;
  writeFileSync(join(codexHome, "config.toml"), toml("fake-mcp"));
  const inputs: LaunchInputs = { agent: "codex", cwd, env };
  const record = await readLaunchRecord(inputs);
  ctx.fact("codexLaunchRecord", record);
  ctx.check("codex: the launch record names both config.toml servers", serverNames(record) === "docs,py", record);
  const h = await startFakeHarness(ctx, harnessFiles, [{ argv: ["fake-mcp", "--codex"] }, { argv: ["node", join(bin, "server.js"), "--toml"] }], { cwd, env, started });
  await waitForArgv(ctx, h.children[0], ["node", join(bin, "fake-mcp"), "--codex"]);
  const idle = await mayRetireIdle(h, record);
  ctx.check("codex lib: retire, both servers recognised", idle.verdict === "retire" && names(idle) === "docs,py", brief(idle));
  const cli = await cliCensus(h.pid, ["--codex", "--cwd", cwd]);
  ctx.check("codex cli (CODEX_HOME from the harness's environment): retire", cli.decision?.verdict === "retire", cli.json ?? cli.stderr);

  writeFileSync(join(codexHome, "config.toml"), toml("another-program"));
  const fresh = await mayRetireIdle(h, await readLaunchRecord(inputs));
  ctx.check("codex: the edit matters to a fresh read (keep)", fresh.verdict === "keep", brief(fresh));
  const stored = await mayRetireIdle(h, record);
  ctx.check("codex lib: with the record read at launch, the edit changes nothing (retire)", stored.verdict === "retire", brief(stored));
}

const scenario = defineScenario({
  name: "census-mcp-servers",
  summary: "servers by path, by PATH name and through node (.mcp.json, --mcp-config, config.toml) are recognised; a re-exec keeps the harness up; config edits after launch change nothing",
  inside: (ctx) =>
    censusRun(ctx, async ({ files, started }) => {
      await claudeCode(ctx, files, started);
      await codex(ctx, files, started);
    }),
});
export default scenario;
runIfMain(import.meta.url, scenario.name);
