import type { PtySize } from "../pty/size.ts";

/**
 * A task's settings as `outlive-shim` (shim/, Rust) reads them, the
 * native replacement for the shell wrapper (wrapper.ts). The contract:
 *
 * - Started as `outlive-shim TASK-ID` (nothing else, so `ps` shows the id,
 *   not a script), as the leader of a new session (`detached: true`), with
 *   fd 0 a pipe carrying these settings (written, then closed), fd 1 and 2
 *   `io/stdout` and `io/stderr` (O_APPEND), fd 3 `io/exit` (made
 *   create-exclusive, holding EXIT_MARKER_PLACEHOLDER). Its environment is
 *   the command's, passed on unchanged.
 * - Settings: NUL-terminated `key=value` fields, `v=1` first and `end=`
 *   last (no `end=` before EOF: cut short). Any byte but NUL passes
 *   through as it is. A problem with them (an unknown or missing key, a
 *   value that does not parse, a relative path, a missing io directory, an
 *   `id` that is not argv[1], over 4 MiB, no EOF within 30 s) is one line
 *   `outlive-shim: KEY: …` on stderr and exit 125, with nothing run and no
 *   exit marker; so is a cgroup (`enter`) it cannot join, or a command it
 *   could not fork. The same line goes to `io/shim-refused` (temp + rename)
 *   in the directory of fd 3's `exit` (the one the caller made for this
 *   task, not one the settings name), so the end reads `never_started` with
 *   the shim's own words (lib/replay/decide.ts).
 * - It joins `enter`, leads the process group (its pid is the group the
 *   supervisor kills), forks the command into it (stdin /dev/null, no fd 3,
 *   signals at their defaults; `io/command-pid` written by the child just
 *   before exec, temp + rename), and execs it as execvp would (not found:
 *   `outlive: NAME: not found`, 127; `permission denied`, 126). Shell mode
 *   runs `SHELL -c -- SCRIPT`.
 * - The end: `io/ended` (made create-exclusive; its time dates the end),
 *   `io/host-stopping` when a TERM came from outside while `systemctl
 *   is-system-running` said `stopping` (asked only then, the moment the TERM
 *   came, and heard until `host_ask_ms` after it, 4 s by default: a
 *   systemd scope's stop timeout less a second; asked of the system bus,
 *   `system_bus`, by a fork of the shim with no exec, and of systemctl only
 *   where the bus fails outright; asked only where systemd runs the host,
 *   `/run/systemd/system`, or as `host_systemd` says), `io/host-unanswered`
 *   (one line) when it was asked and not answered in time, a
 *   last look at the output bound, then the code in fd 3 as `printf
 *   '%-3s\n'` writes it (128 + N for signal N), and exit with it.
 * - A TERM from outside is only noted (the command got it too); HUP, INT
 *   and the like sent to the group never end the shim.
 * - The deadline (boot clock, from the shim's start): `timed-out.reserved`
 *   renamed to `timed-out` and opened O_TRUNC (dating it), TERM to the
 *   group, trimming through the grace, then KILL to the group, the shim
 *   with it, even when the command ended within the grace.
 * - The output bound, as lib/output/trim-loop.ts keeps it (`STREAM.dropped`
 *   before the hole, `trim-failed`), looked at by a backing-off timer
 *   (100 ms while a file grows, doubling while both are quiet). With
 *   `watch=inotify` the shim takes an inotify instance once the timer would
 *   back off to 1.6 s (the files quiet for 1.5 s) and then looks on its word
 *   (at most every 100 ms), so a task that ends sooner never closes one at
 *   its exit (a ~10 ms wait in the kernel before it can be reaped); with
 *   `watch=poll`, or no instance to be had, the timer goes on at 1.6 s. The shim never
 *   sits in the output's way, except a PTY task's, whose terminal it reads.
 * - A PTY task: the shim holds the terminal (no `script`): `pty/in` (a 0600
 *   FIFO in a 0700 `pty/`) is copied to it, its output to `io/stdout`;
 *   `pty/info` is `PID TTY\n` as before; a TERM hangs the terminal up
 *   (SIGHUP to its session leader, the command).
 * - A restart policy: the command runs again after it ends (`always`, or
 *   `on-failure`: a non-zero code), delays doubling from `delayMs` to
 *   `delayMaxMs`, at most `max` times; a TERM from outside or the deadline
 *   ends it (a TERM between attempts ends the task with 143). Each attempt
 *   is a line of `io/attempts`: `{"attempt":N,"event":"start","at":MS,
 *   "pid":P,"stdout":BYTES,"stderr":BYTES}` and `{"attempt":N,"event":"end",
 *   "at":MS,"code":C}`. `io/ended` and the exit marker come once, at the end.
 * - Limit counters (`limit_stats`, the cgroup v2 mount): just before `io/ended`
 *   the shim copies its own cgroup's (`/proc/self/cgroup`) `pids.events` and
 *   `cpu.stat` to `io/pids.events` and `io/cpu.stat` (temp + rename; a file
 *   that cannot be read is left out), so what a CPU or pids limit did is
 *   known after a systemd scope's cgroup is gone, with no supervisor alive.
 */
export interface ShimSettings {
  /** The task's id: also the shim's argv[1]. */
  id: string;
  /** The task's `io/` directory, absolute. */
  io: string;
  /** A `cgroup.procs` to join before anything of the user's runs; null for none. */
  enter?: string | null;
  /** Milliseconds from the shim's start to the deadline; 0 for none. */
  deadlineMs: number;
  /** Milliseconds between the deadline's TERM and its KILL. */
  graceMs: number;
  /** Bytes kept per output stream; 0 keeps all, else at least 4096. */
  maxOutput: number;
  /** How the output bound learns of writes once quiet: `inotify` (falls back to `poll` when there is none to be had). */
  watch: "inotify" | "poll";
  /** Write `io/command-pid` (not for a PTY task: `pty/info` names its command). */
  commandPid: boolean;
  /** The argv, or a shell string and the shell to run it in. */
  command: { argv: string[] } | { shell: string; shellPath: string };
  /** A terminal: the task's `pty/` directory and its size. */
  pty?: ({ dir: string } & PtySize) | null;
  /** Run the command again after it ends. */
  restart?: { when: "on-failure" | "always"; max: number; delayMs: number; delayMaxMs: number } | null;
  /**
   * The system bus's socket, asked whether the host is stopping before
   * systemctl is (a fork of the shim asks it, no exec): absent for
   * `/run/dbus/system_bus_socket`, null for none (systemctl alone).
   */
  systemBus?: string | null;
  /**
   * Whether systemd runs the host, so that it can be asked whether it is
   * stopping: absent, the shim looks (`/run/systemd/system`, as sd_booted
   * does); true or false says so instead (tests of the asking itself).
   */
  hostSystemd?: boolean;
  /**
   * How long after a TERM from outside the answer whether the host is
   * stopping is waited for (`host_ask_ms`): absent for the shim's 4 s.
   */
  hostAskMs?: number;
  /** The cgroup v2 mount: at its end the shim copies its cgroup's `pids.events` and `cpu.stat` into `io/`. */
  limitStats?: string | null;
}

/**
 * The bytes to write to the shim's stdin (then close it). Throws on a value
 * holding a NUL, which no field can carry; everything else the shim checks.
 *
 * @example
 * ```ts
 * import { encodeShimSettings } from "./shim-settings.ts";
 * const bytes = encodeShimSettings({ id: "t-1", io: "/s/tasks/t-1/io", deadlineMs: 0, graceMs: 5000,
 *   maxOutput: 0, watch: "inotify", commandPid: true, command: { argv: ["echo", "$HOME"] } });
 * console.log(bytes.toString("latin1").split("\0").slice(-4)); // ["arg=echo", "arg=$HOME", "end=", ""]
 * ```
 */
export function encodeShimSettings(s: ShimSettings): Buffer {
  const fields: [string, string][] = [
    ["v", "1"],
    ["id", s.id],
    ["io", s.io],
    ...(s.enter ? [["enter", s.enter] as [string, string]] : []),
    ["deadline_ms", String(s.deadlineMs)],
    ["grace_ms", String(s.graceMs)],
    ["max_output", String(s.maxOutput)],
    ["watch", s.watch],
    ["command_pid", s.commandPid ? "1" : "0"],
  ];
  if ("argv" in s.command) fields.push(["mode", "argv"], ...s.command.argv.map((a) => ["arg", a] as [string, string]));
  else fields.push(["mode", "shell"], ["shell", s.command.shellPath], ["script", s.command.shell]);
  if (s.pty) fields.push(["pty_dir", s.pty.dir], ["cols", String(s.pty.cols)], ["rows", String(s.pty.rows)]);
  if (s.restart) {
    fields.push(
      ["restart", s.restart.when],
      ["restart_max", String(s.restart.max)],
      ["restart_delay_ms", String(s.restart.delayMs)],
      ["restart_delay_max_ms", String(s.restart.delayMaxMs)],
    );
  }
  if (s.systemBus !== undefined) fields.push(["system_bus", s.systemBus ?? ""]);
  if (s.hostSystemd !== undefined) fields.push(["host_systemd", s.hostSystemd ? "1" : "0"]);
  if (s.hostAskMs !== undefined) fields.push(["host_ask_ms", String(s.hostAskMs)]);
  if (s.limitStats) fields.push(["limit_stats", s.limitStats]);
  fields.push(["end", ""]);
  const bad = fields.find(([, v]) => v.includes("\0"));
  if (bad) throw new Error(`The shim's setting \`${bad[0]}\` cannot hold a NUL byte`);
  return Buffer.concat(fields.map(([k, v]) => Buffer.from(`${k}=${v}\0`, "utf8")));
}
