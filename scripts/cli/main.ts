import { reportError, wantsJson } from "./exit-codes.ts";
import { printVersion } from "./version.ts";
import { sayDeprecated } from "./deprecation.ts";
import { UsageError } from "./usage-error.ts";

/** A command: its arguments in, its exit code out. */
export type CommandRun = (args: string[]) => Promise<number>;

/** The commands a CLI has, each loaded only when it runs (command-table.ts). */
export type CommandTable = Record<string, () => Promise<CommandRun>>;

/** Old command names that still work for one release, each with the command that replaced it. */
const DEPRECATED: Record<string, string> = { harness: "agent" };

export const HELP = `usage: outlive COMMAND [OPTIONS]

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
  schema    print the wire protocol's JSON Schema (for serve's clients in any language)

outlive COMMAND --help for a command's options; outlive --version for the version.`;

/** Runs the CLI; returns the exit code (scripts/cli/exit-codes.ts: 2 for usage errors, 1 for failures, …). */
export async function main(argv: string[], commands: CommandTable): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    console.log(HELP);
    return name === undefined ? 2 : 0;
  }
  if (name === "--version" || name === "-V") return printVersion();
  const renamed = Object.hasOwn(DEPRECATED, name) ? DEPRECATED[name] : null;
  if (renamed) sayDeprecated("outlive", `outlive ${name}`, `outlive ${renamed}`);
  // An own property only: `outlive toString` is an unknown command, not Object.prototype's.
  const command = Object.hasOwn(commands, renamed ?? name) ? commands[renamed ?? name] : undefined;
  try {
    if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}; see outlive --help`);
    return await (await command())(rest);
  } catch (error) {
    return reportError(command ? `outlive ${name}` : "outlive", error, wantsJson(rest));
  }
}

