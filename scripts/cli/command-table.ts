import type { CommandTable } from "./main.ts";

/**
 * Each command's module, loaded only when that command runs: `outlive --help`
 * and `outlive ps` must not pay for the census or the MCP server. Every
 * command the npm CLI (scripts/outlive.ts) and the single executable
 * (scripts/exe/entry.ts) share; `scenario`, which each has its own way, is
 * added by each. A new command is one line here, one in HELP (main.ts) and
 * one in the completion's words.
 *
 * The executable's bundle holds every module named here: esbuild turns each
 * `import()` into a call of the bundled module, so none is left for Node to
 * load at run time (a code cache allows none: scripts/build-exe.ts checks).
 */
export const COMMANDS: CommandTable = {
  run: async () => (await import("../commands/run.ts")).runCommand,
  ps: async () => (await import("../commands/ps.ts")).psCommand,
  inspect: async () => (await import("../commands/inspect.ts")).inspectCommand,
  wait: async () => (await import("../commands/wait.ts")).waitCommand,
  kill: async () => (await import("../commands/kill.ts")).killCommand,
  logs: async () => (await import("../commands/logs.ts")).logsCommand,
  ack: async () => (await import("../commands/ack.ts")).ackCommand,
  rm: async () => (await import("../commands/rm.ts")).rmCommand,
  prune: async () => (await import("../commands/prune.ts")).pruneCommand,
  replay: async () => (await import("../commands/replay.ts")).replayCommand,
  "stop-all": async () => (await import("../commands/stop-all.ts")).stopAllCommand,
  probe: async () => (await import("../commands/probe.ts")).probeCommand,
  send: async () => (await import("../commands/send.ts")).sendCommand,
  resize: async () => (await import("../commands/resize.ts")).resizeCommand,
  attach: async () => (await import("../commands/attach.ts")).attachCommand,
  census: async () => (await import("../commands/census.ts")).censusCommand,
  agent: async () => (await import("../commands/agent.ts")).agentCommand,
  completion: async () => (await import("../commands/completion.ts")).completionCommand,
  serve: async () => (await import("../commands/serve.ts")).serveCommand,
  mcp: async () => (await import("../commands/mcp.ts")).mcpCommand,
  schema: async () => (await import("../commands/schema.ts")).schemaCommand,
};
