import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { liveGroupMembers, signalGroup } from "../../../lib/kill/process-group.ts";

/** What a host command did. `timedOut` means it was stopped at its bound, not that it failed. */
export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface CommandOptions {
  /** Every host command has a bound: nothing in the harness may hang. */
  timeoutMs: number;
  /** Written to stdin; without it stdin is /dev/null, so a command that reads stdin ends instead of waiting. */
  input?: string;
  env?: Record<string, string>;
  /**
   * `own` (default): a process group of its own, so a timeout ends nsenter's
   * forked child too. `inherit`: stays in the caller's group, so a Ctrl-C of
   * the harness also ends it (debootstrap must not build on unwatched).
   */
  group?: "own" | "inherit";
}

/** How long output may keep arriving after the command itself exited. */
const DRAIN_MS = 1_000;
/** At a timeout, how long the group's leader (nsenter) may take to reap its child and exit before it is killed too. */
const LEADER_GRACE_MS = 2_000;

/**
 * Runs an argv on the host (no shell, so no quoting) and never throws for a
 * non-zero exit: callers decide what an exit code means.
 *
 * Not zx: zx settles when the output pipes close, and `systemd-run --pipe`
 * hands our pipes to the unit inside the container, so a command past its
 * bound kept zx waiting until the unit itself ended (30 s for `sleep 30`
 * with a 1 s timeout). Here the result is settled by the process's exit,
 * plus a short bounded drain, and the timeout kills the whole process group
 * (nsenter forks a child to enter the PID namespace).
 *
 * @example
 * ```ts
 * import { runCommand } from "./command.ts";
 * const r = await runCommand(["echo", "hi"], { timeoutMs: 5000 });
 * console.log(r.exitCode, r.stdout); // 0 "hi\n"
 * ```
 */
export function runCommand(argv: string[], options: CommandOptions): Promise<CommandResult> {
  return new Promise((resolve) => {
    const [file, ...args] = argv;
    const child = spawn(file!, args, {
      detached: options.group !== "inherit",
      stdio: [options.input !== undefined ? "pipe" : "ignore", "pipe", "pipe"],
      env: { ...process.env, ...(options.env ?? {}) },
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    if (options.input !== undefined) {
      child.stdin!.on("error", () => {}); // A command that does not read its input closes the pipe early.
      child.stdin!.end(options.input);
    }
    const timer = setTimeout(() => {
      timedOut = true;
      if (options.group === "inherit") child.kill("SIGKILL");
      else killGroup(child);
    }, options.timeoutMs);

    let settled = false;
    const settle = (exitCode: number | null, signal: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ exitCode, signal, stdout, stderr, timedOut });
    };
    child.on("error", (error) => {
      stderr += `${error.message}\n`;
      settle(127, null);
    });
    child.on("exit", (exitCode, signal) => {
      // Output still in flight is read for a moment; a pipe held open by someone else is then let go.
      const drain = setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
        settle(exitCode, signal);
      }, timedOut ? 0 : DRAIN_MS);
      child.on("close", () => {
        clearTimeout(drain);
        settle(exitCode, signal);
      });
    });
  });
}

/**
 * Ends a command's process group at its bound: every member but the leader and the leader's own children first,
 * then the leader once it has exited by itself (or after LEADER_GRACE_MS). The leader is often nsenter, which
 * forked the command into the container's PID namespace and waits for it. Killed together with it, nsenter could
 * exit before reaping that child, and the orphan goes to the reaper of nsenter's own namespace: under a PID 1
 * that reaps nothing (vitest or npm as PID 1 of a CI job's pid namespace, `.ci/loaded`), the dead child stayed a
 * zombie in the container's namespace, and the container's PID 1 could never finish exiting (the kernel's
 * zap_pid_ns_processes waits for every pid of the namespace to be reaped): the teardown found it in state S.
 * Killing the child first lets nsenter reap it and end with its status.
 */
function killGroup(child: ChildProcess): void {
  const leader = child.pid;
  if (leader === undefined) return;
  const others = new Set<number>([...childPids(leader), ...(liveGroupMembers(leader) ?? [])]);
  others.delete(leader);
  for (const pid of others) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone already.
    }
  }
  const last = () => void signalGroup(leader, "SIGKILL");
  if (child.exitCode !== null || child.signalCode !== null) return last();
  const grace = setTimeout(last, LEADER_GRACE_MS);
  child.once("exit", () => {
    clearTimeout(grace);
    last();
  });
}

/** The children of `pid` (`/proc/PID/task/PID/children`); none when it is gone. */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
