import type { TaskCommand } from "../store/record.ts";

/**
 * The shell program every task runs in: `/bin/sh -c WRAPPER outlive-task
 * ENTER DEADLINE GRACE TIMED_OUT_FILE TRIM MAXOUT MODE CMD…`, where MODE is
 * `argv` (CMD… is the argv) or `shell` (CMD… is SHELL_PATH and the string).
 *
 * - ENTER: a `cgroup.procs` file to move itself into before any user code
 *   runs (empty for none). Exit 125 if that fails, so a task never runs
 *   outside the cgroup it was promised.
 * - DEADLINE: seconds until the watchdog ends the task even when no
 *   supervisor is alive (0 for none): it touches TIMED_OUT_FILE, sends TERM
 *   to the group, waits GRACE seconds, then KILL.
 * - The command gets no fd 3; the wrapper writes the exit code to fd 3 (the
 *   exit marker the supervisor opened create-exclusive) and exits with it.
 * - The watchdog's trap names its sleep by `$!`, set the moment the sleep
 *   is forked, and ends it with KILL: a TERM can reach the child between
 *   fork and exec, while it still has dash's catching handler, and be
 *   swallowed there; KILL cannot. So no `sleep DEADLINE` outlives a task
 *   that ended at once. Each process reaps what it ended (the watchdog its
 *   sleep, the wrapper its watchdog) before it exits: an orphan would linger
 *   as a zombie in the task's group until PID 1 reaps it, and the group
 *   would look alive to kill(-pgid, 0). The wrapper waits for the watchdog
 *   only while TIMED_OUT_FILE is absent: the watchdog creates it before it
 *   stops heeding TERM, so a wrapper never waits on a watchdog that is
 *   ending the group (and would KILL the wrapper before its marker).
 * - `SHELL -c -- "$2"`: a shell string that begins with `-` is the command, not options to the shell.
 * - The end is recorded in space reserved at the start, so a task that
 *   filled the disk still leaves its exit code: fd 3 holds 4 placeholder
 *   bytes (EXIT_MARKER_PLACEHOLDER) and `printf '%-3s\n'` overwrites exactly
 *   those; the watchdog renames TIMED_OUT_FILE.reserved (made at spawn) into
 *   place, and `: >` then sets its time without needing a block.
 * - The wrapper's wait for the watchdog says nothing: a TERM that lands
 *   before the watchdog's trap is set ends it by the signal, and dash would
 *   print "Terminated" into the task's stderr (57 of 300 quick tasks, measured).
 * - TRIM (empty for none): the output trimmer's program (lib/output), run
 *   beside the command with MAXOUT and the io directory (TIMED_OUT_FILE's)
 *   as $1 and $2, in a fork of the wrapper like the watchdog (so the census
 *   and the harness launcher take it for the wrapper's own, not the task's),
 *   ended and reaped once the command is over, so its last trim lands
 *   before the exit marker. (A second `wait` would not tell an interrupted
 *   wait from a finished one: both shells return the saved status again.)
 * - A TERM to the wrapper only waits for the command, so a kill still leaves
 *   an exit marker when the command itself exits on TERM.
 */
export const WRAPPER_SCRIPT = `enter=$1 deadline=$2 grace=$3 timedout=$4 trim=$5 maxout=$6 mode=$7
shift 7
if [ -n "$enter" ]; then
  echo $$ > "$enter" || { echo "outlive: could not enter the task's cgroup ($enter)" >&2; exit 125; }
fi
wd=
if [ "$deadline" -gt 0 ]; then
  (
    trap 'kill -KILL $! 2>/dev/null; wait $!; exit 0' TERM
    sleep "$deadline" </dev/null >/dev/null 2>&1 &
    wait $!
    mv -f "$timedout.reserved" "$timedout" 2>/dev/null; : > "$timedout"
    trap '' TERM
    kill -TERM -$$ 2>/dev/null
    sleep "$grace"
    kill -KILL -$$ 2>/dev/null
  ) 3>&- </dev/null >/dev/null 2>&1 &
  wd=$!
fi
tr=
if [ -n "$trim" ]; then
  ( set -- "$maxout" "\${timedout%/*}"; eval "$trim" ) 3>&- </dev/null >/dev/null 2>&1 &
  tr=$!
fi
trap 'got_term=1' TERM
if [ "$mode" = shell ]; then
  "$1" -c -- "$2" 3>&-
else
  "$@" 3>&-
fi
rc=$?
if [ -n "$wd" ]; then kill $wd 2>/dev/null; [ -e "$timedout" ] || wait $wd 2>/dev/null; fi
if [ -n "$tr" ]; then kill $tr 2>/dev/null; wait $tr 2>/dev/null; fi
printf '%-3s\n' "$rc" >&3
exit "$rc"`;

/** The wrapper's `$0`: how a task's wrapper is told from other processes in its cgroup. */
export const WRAPPER_NAME = "outlive-task";

export interface WrapperArgs {
  command: TaskCommand;
  /** `cgroup.procs` to enter, or null. */
  enterCgroupProcs: string | null;
  /** Whole seconds until the watchdog fires; 0 for none. */
  deadlineSeconds: number;
  graceMs: number;
  timedOutFile: string;
  /** The output trimmer and its bound per stream, or null to keep all output. */
  trim?: { script: string; maxBytes: number } | null;
}

/**
 * The argv (after any placement prefix) that runs a task under the wrapper.
 * Arguments are passed as argv elements, never spliced into shell text, so
 * they reach the command byte for byte.
 *
 * @example
 * ```ts
 * import { wrapperArgv } from "./wrapper.ts";
 * const argv = wrapperArgv({ command: { argv: ["echo", "$HOME"] }, enterCgroupProcs: null,
 *   deadlineSeconds: 0, graceMs: 2000, timedOutFile: "/tmp/t/io/timed-out" });
 * console.log(argv.slice(-2)); // ["echo", "$HOME"]
 * ```
 */
export function wrapperArgv(a: WrapperArgs): string[] {
  const tail = "argv" in a.command ? ["argv", ...a.command.argv] : ["shell", a.command.shellPath ?? "/bin/sh", a.command.shell];
  return [
    "/bin/sh",
    "-c",
    WRAPPER_SCRIPT,
    WRAPPER_NAME,
    a.enterCgroupProcs ?? "",
    String(Math.max(0, Math.ceil(a.deadlineSeconds))),
    (a.graceMs / 1000).toFixed(3),
    a.timedOutFile,
    a.trim?.script ?? "",
    String(a.trim?.maxBytes ?? 0),
    ...tail,
  ];
}
