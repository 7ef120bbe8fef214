#!/usr/bin/env -S node --
import { reportError, wantsJson } from "./cli/exit-codes.ts";
import { printVersion } from "./cli/version.ts";
import { sayDeprecated } from "./cli/deprecation.ts";
import { UsageError } from "./cli/usage-error.ts";

type CommandRun = (args: string[]) => Promise<number>;

/**
 * Each command's module, loaded only when that command runs: `outlive --help`
 * and `outlive ps` must not pay for the scenario runner, the census or a
 * compiler. A new command is one line here and one in HELP.
 */
const COMMANDS: Record<string, () => Promise<CommandRun>> = {
  run: async () => (await import("./commands/run.ts")).runCommand,
  ps: async () => (await import("./commands/ps.ts")).psCommand,
  inspect: async () => (await import("./commands/inspect.ts")).inspectCommand,
  wait: async () => (await import("./commands/wait.ts")).waitCommand,
  kill: async () => (await import("./commands/kill.ts")).killCommand,
  logs: async () => (await import("./commands/logs.ts")).logsCommand,
  ack: async () => (await import("./commands/ack.ts")).ackCommand,
  rm: async () => (await import("./commands/rm.ts")).rmCommand,
  prune: async () => (await import("./commands/prune.ts")).pruneCommand,
  replay: async () => (await import("./commands/replay.ts")).replayCommand,
  "stop-all": async () => (await import("./commands/stop-all.ts")).stopAllCommand,
  probe: async () => (await import("./commands/probe.ts")).probeCommand,
  send: async () => (await import("./commands/send.ts")).sendCommand,
  resize: async () => (await import("./commands/resize.ts")).resizeCommand,
  attach: async () => (await import("./commands/attach.ts")).attachCommand,
  census: async () => (await import("./commands/census.ts")).censusCommand,
  agent: async () => (await import("./commands/agent.ts")).agentCommand,
  scenario: async () => (await import("./commands/scenario.ts")).scenarioCommand,
  completion: async () => (await import("./commands/completion.ts")).completionCommand,
  serve: async () => (await import("./commands/serve.ts")).serveCommand,
  mcp: async () => (await import("./commands/mcp.ts")).mcpCommand,
};

/** Old command names that still work for one release, each with the command that replaced it. */
const DEPRECATED: Record<string, string> = { harness: "agent" };

const HELP = `usage: outlive COMMAND [OPTIONS]

Background commands that outlive a restart of their supervisor.

commands:
  run       start a task (its id is printed once it runs)
  ps        list tasks and their true state
  inspect   print tasks' whole records
  wait      wait until tasks have ended
  kill      end tasks: TERM, grace, KILL, cgroup kill
  logs      print a task's output
  ack       mark finished tasks' completions as received (--all: those started from the CLI)
  rm        remove finished tasks and quarantined records
  prune     remove finished tasks no one waits on (acknowledged, or started from the CLI)
  replay    replay the storage now and print what was found
  stop-all  end every task of the storage
  probe     which placements work here, and why
  send      type text into a PTY task's terminal (escapes for control keys)
  resize    set the size of a PTY task's terminal
  attach    an interactive session on a PTY task's terminal (Ctrl-] detaches)
  census    what runs under a process, and may it be retired when idle
  agent     run an agent (Claude Code, Codex, …) as a task with its launch record; retire it when idle
  scenario  run scenario files (yours, from any path) in a systemd container; list outlive's own
  completion  print a shell completion script: bash, zsh, fish
  serve     a supervisor for a tool in any language: JSON-RPC 2.0 on stdin/stdout
  mcp       an MCP server for agents: durable background tasks as tools (stdio, or --http on loopback)

outlive COMMAND --help for a command's options; outlive --version for the version.`;

/** Runs the CLI; returns the exit code (scripts/cli/exit-codes.ts: 2 for usage errors, 1 for failures, …). */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    console.log(HELP);
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-V") return printVersion();
  const renamed = Object.hasOwn(DEPRECATED, name) ? DEPRECATED[name] : null;
  if (renamed) sayDeprecated("outlive", `outlive ${name}`, `outlive ${renamed}`);
  // An own property only: `outlive toString` is an unknown command, not Object.prototype's.
  const command = Object.hasOwn(COMMANDS, renamed ?? name) ? COMMANDS[renamed ?? name] : undefined;
  try {
    if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}; see outlive --help`);
    return await (await command())(rest);
  } catch (error) {
    return reportError(command ? `outlive ${name}` : "outlive", error, wantsJson(rest));
  }
}

process.exitCode = await main(process.argv.slice(2));
