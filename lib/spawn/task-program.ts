import { TRIM_SCRIPT } from "../output/trim-loop.ts";
import { START_TIME_PRECISION_MS } from "../proc/start-time.ts";
import { holderCommand, ptyPaths } from "../pty/holder.ts";
import type { TaskPaths } from "../store/layout.ts";
import type { TaskRecord } from "../store/record/record.ts";
import { encodeShimSettings } from "./shim-settings.ts";
import { wrapperArgv } from "./wrapper.ts";

/**
 * What the shim's deadline gets beyond the task's timeout: the record's
 * `startedAt` is the kernel's start time, read in clock ticks (10 ms) against
 * a boot time read from `/proc/uptime` (also 10 ms), so it may stand up to two
 * ticks (START_TIME_PRECISION_MS) after the moment the shim starts counting; a
 * deadline counted from there is never seen early against it. (The wrapper,
 * counting centiseconds of /proc/uptime, added one.)
 */
export const DEADLINE_SLACK_MS = START_TIME_PRECISION_MS;

/** The shim's own name: its `argv[0]`, what `ps` shows before the task's id. */
export const SHIM_NAME = "outlive-shim";

/**
 * What a task's first process is: outlive's native shim (`outlive-shim ID`,
 * its settings on stdin), or the shell wrapper where no shim is to be had.
 */
export interface TaskProgram {
  kind: "shim" | "wrapper";
  /** The argv after the placement's prefix; argv[0] the program's path. */
  argv: string[];
  /** What the process is to see as its argv[0] (the shim's name), where the spawn can set it; null to leave it. */
  argv0: string | null;
  /** The bytes its stdin carries (the shim's settings), or null for /dev/null. */
  stdin: Buffer | null;
}

export interface TaskProgramInput {
  record: TaskRecord;
  paths: TaskPaths;
  /** The shim's path, or null to use the shell wrapper. */
  shim: string | null;
  /** The `cgroup.procs` to join before anything of the user's runs, or null. */
  enterCgroupProcs: string | null;
  deadlineSeconds: number;
  graceMs: number;
  /** How the shim learns its output grew (see SupervisorOptions.inotifyTasks). */
  watch: "inotify" | "poll";
  /** The task's environment, for a PTY task's wrapper-and-holder (it restores SHELL and TERM itself). */
  env: Record<string, string | undefined>;
  /** The cgroup v2 mount, when the task has CPU or pids limits whose counters the shim copies at its end. */
  limitStats?: string | null;
  /** How long the shim may wait for the host's answer after a TERM from outside (the plan's `hostAskMs`); absent for its default. */
  hostAskMs?: number;
}

/**
 * The program a task is started as, with everything it keeps for the task
 * while no supervisor runs (the cgroup it joins, the deadline, the output
 * bound, the exit marker, a PTY task's terminal). Pure.
 *
 * @example
 * ```ts
 * import { taskProgram } from "./task-program.ts";
 * import { taskPaths } from "../store/layout.ts";
 * const record = { id: "t-1", command: { argv: ["sleep", "60"] }, pty: null, maxOutputBytes: 4096 } as never;
 * const base = { record, paths: taskPaths("/s", "t-1"), enterCgroupProcs: null, deadlineSeconds: 0, graceMs: 2000, watch: "poll" as const, env: {} };
 * const shim = taskProgram({ ...base, shim: "/opt/outlive/outlive-shim" });
 * console.log(shim.argv, shim.argv0, shim.stdin!.toString("latin1").startsWith("v=1\0id=t-1\0")); // ["/opt/outlive/outlive-shim", "t-1"] "outlive-shim" true
 * console.log(taskProgram({ ...base, shim: null }).argv.slice(0, 2)); // ["/bin/sh", "-c"]
 * ```
 */
export function taskProgram(input: TaskProgramInput): TaskProgram {
  const { record, paths } = input;
  const maxBytes = record.maxOutputBytes ?? 0;
  if (input.shim !== null) {
    const command = "argv" in record.command
      ? { argv: record.command.argv }
      : { shell: record.command.shell, shellPath: record.command.shellPath ?? "/bin/sh" };
    const stdin = encodeShimSettings({
      id: record.id,
      io: paths.io,
      enter: input.enterCgroupProcs,
      deadlineMs: input.deadlineSeconds > 0 ? Math.ceil(input.deadlineSeconds * 1000) + DEADLINE_SLACK_MS : 0,
      graceMs: input.graceMs,
      maxOutput: maxBytes,
      watch: input.watch,
      // A PTY task's command is its terminal's session leader, which `pty/info` names.
      commandPid: !record.pty,
      command,
      pty: record.pty ? { dir: ptyPaths(paths.dir).dir, ...record.pty } : null,
      restart: record.restart ?? null,
      // What the task's CPU and pids limits did is read by the shim as it ends, while its cgroup still exists.
      limitStats: input.limitStats ?? null,
      hostAskMs: input.hostAskMs,
    });
    return { kind: "shim", argv: [input.shim, record.id], argv0: SHIM_NAME, stdin };
  }
  const argv = wrapperArgv({
    // A PTY task's wrapper runs the holder, which runs the command on its terminal.
    command: record.pty ? holderCommand(record.command, ptyPaths(paths.dir), record.pty, input.env) : record.command,
    enterCgroupProcs: input.enterCgroupProcs,
    deadlineSeconds: input.deadlineSeconds,
    graceMs: input.graceMs,
    timedOutFile: paths.timedOut,
    trim: maxBytes > 0 ? { script: TRIM_SCRIPT, maxBytes } : null,
    // A PTY task's wrapper runs the holder; the command's own pid is its terminal's (`pty/info`).
    commandPidFile: record.pty ? null : paths.commandPid,
  });
  return { kind: "wrapper", argv, argv0: null, stdin: null };
}
