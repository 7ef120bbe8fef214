#!/usr/bin/env node
import { reportError, wantsJson } from "./cli/exit-codes.ts";
import { printVersion } from "./cli/version.ts";
import { sayDeprecated } from "./cli/deprecation.ts";
import { UsageError } from "./cli/usage-error.ts";
import { ACK_HELP, ackCommand } from "./commands/ack.ts";
import { COMPLETION_HELP, completionCommand } from "./commands/completion.ts";
import { INSPECT_HELP, inspectCommand } from "./commands/inspect.ts";
import { KILL_HELP, killCommand } from "./commands/kill.ts";
import { LOGS_HELP, logsCommand } from "./commands/logs.ts";
import { PROBE_HELP, probeCommand } from "./commands/probe.ts";
import { PRUNE_HELP, pruneCommand } from "./commands/prune.ts";
import { PS_HELP, psCommand } from "./commands/ps.ts";
import { REPLAY_HELP, replayCommand } from "./commands/replay.ts";
import { RM_HELP, rmCommand } from "./commands/rm.ts";
import { RUN_HELP, runCommand } from "./commands/run.ts";
import { STOP_ALL_HELP, stopAllCommand } from "./commands/stop-all.ts";
import { WAIT_HELP, waitCommand } from "./commands/wait.ts";
import { censusCommand } from "./commands/census.ts";
import { AGENT_HELP, agentCommand } from "./commands/agent.ts";
import { ATTACH_HELP, attachCommand } from "./commands/attach.ts";
import { RESIZE_HELP, resizeCommand } from "./commands/resize.ts";
import { SEND_HELP, sendCommand } from "./commands/send.ts";
import { SCENARIO_HELP, scenarioCommand } from "./commands/scenario.ts";

const COMMANDS: Record<string, { run: (args: string[]) => Promise<number>; help: string }> = {
  run: { run: runCommand, help: RUN_HELP },
  ps: { run: psCommand, help: PS_HELP },
  inspect: { run: inspectCommand, help: INSPECT_HELP },
  wait: { run: waitCommand, help: WAIT_HELP },
  kill: { run: killCommand, help: KILL_HELP },
  logs: { run: logsCommand, help: LOGS_HELP },
  ack: { run: ackCommand, help: ACK_HELP },
  rm: { run: rmCommand, help: RM_HELP },
  prune: { run: pruneCommand, help: PRUNE_HELP },
  replay: { run: replayCommand, help: REPLAY_HELP },
  "stop-all": { run: stopAllCommand, help: STOP_ALL_HELP },
  probe: { run: probeCommand, help: PROBE_HELP },
  send: { run: sendCommand, help: SEND_HELP },
  resize: { run: resizeCommand, help: RESIZE_HELP },
  attach: { run: attachCommand, help: ATTACH_HELP },
  census: { run: censusCommand, help: "usage: outlive census PID [--json] [--cgroup auto|PATH|none] … (see outlive census --help)" },
  agent: { run: agentCommand, help: AGENT_HELP },
  scenario: { run: scenarioCommand, help: SCENARIO_HELP },
  completion: { run: completionCommand, help: COMPLETION_HELP },
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
  ack       mark finished tasks' completions as received
  rm        remove finished tasks and quarantined records
  prune     remove acknowledged finished tasks, oldest first
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
    return await command.run(rest);
  } catch (error) {
    return reportError(command ? `outlive ${name}` : "outlive", error, wantsJson(rest));
  }
}

process.exitCode = await main(process.argv.slice(2));
