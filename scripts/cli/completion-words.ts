import { ALL_STATES } from "../../lib/store/record/record.ts";

/** A flag as completion offers it: its long name, its short letter, and what its value is. */
export interface CompletedFlag {
  name: string;
  short?: string;
  /** `dir` and `file` complete paths; a list completes its words; `value` takes anything; absent: no value. */
  value?: "dir" | "file" | "value" | readonly string[];
}

/** A command as completion offers it: its flags and its subcommands. */
export interface CompletedCommand {
  about: string;
  flags: CompletedFlag[];
  subcommands?: readonly string[];
  /** The flags only a subcommand takes, on top of `flags`. */
  subcommandFlags?: Record<string, CompletedFlag[]>;
}

const STORAGE_FLAGS: CompletedFlag[] = [
  { name: "storage", value: "dir" },
  { name: "mode", value: ["daemon", "standalone"] },
  { name: "placement", value: ["auto", "systemd-scope", "cgroup-v2", "process-group"] },
  { name: "prefix", value: "value" },
  { name: "lock-wait", value: "value" },
  { name: "json" },
  { name: "help", short: "h" },
];

/** A command's flags, its subcommands' among them. */
export function allFlags(command: CompletedCommand): CompletedFlag[] {
  return [...command.flags, ...Object.values(command.subcommandFlags ?? {}).flat()];
}

/**
 * Every command and flag the shells complete. A test runs each command's
 * `--help` and checks this table against it, so the two cannot drift.
 */
export const COMPLETION: Record<string, CompletedCommand> = {
  run: {
    about: "start a task",
    flags: [
      ...STORAGE_FLAGS,
      { name: "id", value: "value" },
      { name: "cwd", value: "dir" },
      { name: "env", value: "value" },
      { name: "key", value: "value" },
      { name: "timeout", value: "value" },
      { name: "memory-max", value: "value" },
      { name: "max-output", value: "value" },
      { name: "shell", value: "value" },
      { name: "shell-path", value: "file" },
      { name: "pty" },
      { name: "cols", value: "value" },
      { name: "rows", value: "value" },
      { name: "env-file", value: "file" },
      { name: "ensure" },
      { name: "cpu", value: "value" },
      { name: "pids", value: "value" },
      { name: "ready-log", value: "value" },
      { name: "ready-port", value: "value" },
      { name: "ready-http", value: "value" },
      { name: "ready-timeout", value: "value" },
      { name: "wait-ready" },
      { name: "restart", value: ["on-failure", "always"] },
      { name: "restart-max", value: "value" },
      { name: "restart-delay", value: "value" },
      { name: "restart-delay-max", value: "value" },
    ],
  },
  ps: {
    about: "list tasks and their true state",
    flags: [...STORAGE_FLAGS, { name: "all", short: "a" }, { name: "quiet", short: "q" }, { name: "state", value: ALL_STATES }, { name: "key", value: "value" }, { name: "no-trunc" }, { name: "no-ports" }],
  },
  inspect: { about: "print tasks' whole records", flags: STORAGE_FLAGS },
  wait: { about: "wait until tasks have ended", flags: [...STORAGE_FLAGS, { name: "timeout", value: "value" }, { name: "interval", value: "value" }, { name: "ack" }] },
  kill: { about: "end tasks: TERM, grace, KILL, cgroup kill", flags: [...STORAGE_FLAGS, { name: "grace", value: "value" }] },
  logs: {
    about: "print a task's output",
    flags: [
      { name: "storage", value: "dir" },
      { name: "follow", short: "f" },
      { name: "tail", value: "value" },
      { name: "from", value: "value" },
      { name: "stderr" },
      { name: "both" },
      { name: "json" },
      { name: "help", short: "h" },
    ],
  },
  ack: { about: "mark finished tasks' completions as received", flags: [...STORAGE_FLAGS, { name: "all" }] },
  rm: { about: "remove finished tasks and quarantined records", flags: [...STORAGE_FLAGS, { name: "force", short: "f" }] },
  prune: { about: "remove finished tasks that may go, oldest first", flags: [...STORAGE_FLAGS, { name: "older-than", value: "value" }, { name: "keep", value: "value" }, { name: "unacknowledged" }] },
  replay: { about: "replay the storage now and print what was found", flags: STORAGE_FLAGS },
  "stop-all": { about: "end every task of the storage", flags: STORAGE_FLAGS },
  probe: { about: "which placements work here, and why", flags: [{ name: "prefix", value: "value" }, { name: "json" }, { name: "help", short: "h" }] },
  send: { about: "type text into a PTY task's terminal", flags: STORAGE_FLAGS },
  resize: { about: "set the size of a PTY task's terminal", flags: STORAGE_FLAGS },
  attach: { about: "an interactive session on a PTY task's terminal", flags: STORAGE_FLAGS },
  census: {
    about: "what runs under a process, and may it be retired when idle",
    flags: [
      { name: "json" },
      { name: "cgroup", value: "value" },
      { name: "adopted" },
      { name: "start-time", value: "value" },
      { name: "timeout-ms", value: "value" },
      { name: "codex" },
      { name: "cwd", value: "dir" },
      { name: "mcp-config", value: "file" },
      { name: "strict-mcp-config" },
      { name: "help", short: "h" },
    ],
  },
  agent: {
    about: "run an agent as a task with its launch record; retire it when idle",
    subcommands: ["run", "retire"],
    flags: STORAGE_FLAGS,
    subcommandFlags: {
      run: [
        { name: "agent", value: ["claude-code", "codex", "other"] },
        { name: "server", value: "value" },
        { name: "id", value: "value" },
        { name: "key", value: "value" },
        { name: "timeout", value: "value" },
      ],
      retire: [{ name: "dry-run" }],
    },
  },
  scenario: {
    about: "run scenario files in a systemd container; list outlive's own",
    subcommands: ["run", "list"],
    flags: [
      { name: "systemd", value: ["252", "257"] },
      { name: "engine", value: "value" },
      { name: "runtime", value: ["node", "deno"] },
      { name: "reports", value: "dir" },
      { name: "json", value: "file" },
      { name: "cache", value: "dir" },
      { name: "help", short: "h" },
    ],
  },
  serve: { about: "a supervisor for a tool in any language: JSON-RPC 2.0 on stdin/stdout", flags: [...STORAGE_FLAGS, { name: "stdio" }, { name: "max-line-bytes", value: "value" }] },
  mcp: {
    about: "an MCP server for agents: durable background tasks as tools",
    flags: [
      ...STORAGE_FLAGS.filter((f) => f.name !== "json"),
      { name: "http", value: "value" },
      { name: "token-file", value: "file" },
      { name: "max-line-bytes", value: "value" },
      { name: "wait-default", value: "value" },
      { name: "wait-max", value: "value" },
      { name: "output-bytes", value: "value" },
    ],
  },
  schema: { about: "print the wire protocol's JSON Schema", flags: [{ name: "help", short: "h" }] },
  completion: { about: "print a shell completion script", subcommands: ["bash", "zsh", "fish"], flags: [{ name: "help", short: "h" }] },
};
