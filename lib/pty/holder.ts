import { type PtyPaths, taskPtyPaths } from "../store/layout.ts";
import type { TaskCommand } from "../store/record/record.ts";
import type { PtySize } from "./size.ts";

/**
 * The holder: a small `/bin/sh` that keeps a PTY task's terminal, run under
 * outlive's wrapper in the task's own group, scope or cgroup. The terminal
 * itself is util-linux `script` (its master end, its copy of the output to
 * `io/stdout`, the child's exit status with `-e`).
 *
 * - Input is the FIFO `pty/in` (0600, in the task's 0700 directory), held
 *   open read-write as script's stdin, so a writer that goes away is never an
 *   end of input. It is not in `io/`: a FIFO in a watched directory hangs
 *   Deno's file watcher, which opens what appears there.
 * - script runs in a session of its own, so the task's TERM (the kill ladder,
 *   the watchdog) reaches this shell and not script: script answers TERM by
 *   ending its child and exiting 0, which would lose the real exit code.
 *   Instead the TERM hangs the terminal up: SIGHUP to the terminal's session
 *   leader, as a closed terminal window does (an interactive shell ignores
 *   TERM but runs its EXIT trap on HUP). script's parent-death signal (KILL,
 *   from setpriv) ends it with this shell, so the KILL of the ladder also ends
 *   the holder and the closed master hangs up whatever was left.
 * - In the background, sh ignores INT and QUIT; `env --default-signal` gives
 *   the terminal's processes their defaults back, so Ctrl-C works in them.
 * - A TERM that comes before the terminal is up (no `pty/info` yet) says
 *   nothing: the shell's "cannot open" would land in the task's stderr.
 * - `wait` cut short by the trap is resumed: the holder exits with script's
 *   status, which `-e` makes the child's (128+N for a signal).
 */
export const HOLDER_SCRIPT = `dir=$1 child=$2
fifo=$dir/in info=$dir/info
mkdir -m 700 "$dir" 2>/dev/null
[ -p "$fifo" ] || mkfifo -m 600 "$fifo" || exit 125
( exec setsid setpriv --pdeathsig KILL env --default-signal=INT,QUIT SHELL=/bin/sh script -qefc "$child" /dev/null ) 0<>"$fifo" &
h=$!
trap 'got=1; { read p t < "$info"; } 2>/dev/null && kill -HUP "$p" 2>/dev/null' TERM
while :; do
  got=; wait "$h"; rc=$?
  [ -n "$got" ] || break
  kill -0 "$h" 2>/dev/null || { wait "$h" 2>/dev/null; r=$?; [ "$r" = 127 ] || rc=$r; break; }
done
exit "$rc"`;

/** The holder's `$0`. */
export const HOLDER_NAME = "outlive-pty";

export type { PtyPaths };

/**
 * The FIFO and the info file of a task's terminal. Pure: nothing is read or made.
 *
 * @example
 * ```ts
 * import { ptyPaths } from "./holder.ts";
 * console.log(ptyPaths("/s/tasks/t-1").input); // "/s/tasks/t-1/pty/in"
 * ```
 */
export function ptyPaths(taskDir: string): PtyPaths {
  return taskPtyPaths(taskDir);
}

/** One shell word that stands for `s` byte for byte. */
export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * The first words the terminal's session leader runs, before it becomes the
 * task's command: set the size, close the terminal to everyone but its owner
 * (a pts is group-writable by `tty` by default), give the command a TERM and
 * its own SHELL back, and say where it is (atomically, so a reader never sees
 * half of it). Then `exec`, so the command is the session leader itself.
 */
export function childScript(command: TaskCommand, paths: PtyPaths, size: PtySize, env: Record<string, string | undefined>): string {
  const tmp = `${paths.info}.tmp`;
  const exec = "argv" in command ? command.argv.map(shellQuote).join(" ") : `${shellQuote(command.shellPath ?? "/bin/sh")} -c -- ${shellQuote(command.shell)}`;
  const shell = env.SHELL === undefined ? "unset SHELL" : `SHELL=${shellQuote(env.SHELL)}; export SHELL`;
  return [
    `t=$(tty) || exit 125`,
    `stty cols ${size.cols} rows ${size.rows} || exit 125`,
    `chmod 600 "$t" 2>/dev/null`,
    `printf '%s %s\\n' $$ "$t" > ${shellQuote(tmp)} && mv -f ${shellQuote(tmp)} ${shellQuote(paths.info)} || exit 125`,
    `unset t; ${shell}; [ -n "\${TERM:-}" ] || TERM=xterm-256color; export TERM`,
    `exec ${exec}`,
  ].join("\n");
}

/**
 * What the wrapper runs for a PTY task: the holder, as an argv, so the
 * wrapper (exit code, watchdog, cgroup entry) stays the same for every task.
 *
 * @example
 * ```ts
 * import { holderCommand, ptyPaths } from "./holder.ts";
 * const cmd = holderCommand({ argv: ["bash", "-i"] }, ptyPaths("/s/tasks/t-1"), { cols: 80, rows: 24 }, {});
 * console.log(cmd.argv.slice(0, 2)); // ["/bin/sh", "-c"]
 * ```
 */
export function holderCommand(command: TaskCommand, paths: PtyPaths, size: PtySize, env: Record<string, string | undefined>): { argv: string[] } {
  return { argv: ["/bin/sh", "-c", HOLDER_SCRIPT, HOLDER_NAME, paths.dir, childScript(command, paths, size, env)] };
}
