import type { TaskCommand } from "../store/record/record.ts";

/**
 * The shell program every task runs in: `/bin/sh -c WRAPPER outlive-task
 * ENTER DEADLINE GRACE TIMED_OUT_FILE TRIM MAXOUT COMMAND_PID_FILE MODE CMD…`,
 * where MODE is `argv` (CMD… is the argv) or `shell` (CMD… is SHELL_PATH and
 * the string).
 *
 * - The wrapper never writes into the task's output: its own stderr is
 *   /dev/null from the first line, and the task's stderr is kept on fd 4 for
 *   the command alone. So the shell's own reports (dash's `Terminated` when
 *   the command dies of a signal, `outlive-task: 50: …` with a line number)
 *   go nowhere. The command runs in a subshell whose redirections are made
 *   after the fork: a simple command's `2>&4` would be made in the wrapper
 *   itself while it waits, and its report would land in the task's stderr.
 *   The only lines it writes there on purpose are outlive's own (`outlive:
 *   …`, exit 125 or 127), for a task that could not start at all.
 * - COMMAND_PID_FILE (empty for none): the subshell writes its own pid there
 *   (from /proc/self/stat, a builtin `read`, no fork; one `echo`, so a reader
 *   sees the whole line or nothing) and then `exec`s the command, so that pid
 *   is the command's own (`commandPid` in the record). An argv task's program
 *   was looked up before the spawn (lib/start/program-lookup.ts); if it is
 *   gone by now the subshell says so in one line and exits 127, as a shell
 *   would, but without a shell's line number.
 * - ENTER: a `cgroup.procs` file to move itself into before any user code
 *   runs (empty for none). Exit 125 if that fails, so a task never runs
 *   outside the cgroup it was promised.
 * - DEADLINE: whole seconds until the warden ends the task even when no
 *   supervisor is alive (0 for none): it touches TIMED_OUT_FILE, sends TERM
 *   to the group, waits GRACE seconds (three decimals), then KILL.
 * - TRIM (empty for none): the output trimmer's program (lib/output), which
 *   the warden evals with MAXOUT and the io directory (TIMED_OUT_FILE's) as
 *   $1 and $2; it defines `look` and leaves in `nap` the centiseconds until
 *   the next look (empty: stop trimming).
 * - The warden is one fork of the wrapper that keeps both the deadline and
 *   the output bound, so a task costs the wrapper, the warden with one
 *   `sleep` at a time, and the command; with no deadline and no TRIM there
 *   is no warden. Being a fork, it has the wrapper's argv, which is how the
 *   census and the harness launcher take it for the wrapper's own, not the
 *   task's. It naps min(`nap`, time left) and reads the time from
 *   /proc/uptime (a builtin `read`, no fork) after each nap, so naps do not
 *   add up to a late deadline; with no TRIM it sleeps straight to it.
 *   /proc/uptime is cut to centiseconds, so each end is one more, never early.
 * - The command gets no fd 3; the wrapper writes the exit code to fd 3 (the
 *   exit marker the supervisor opened create-exclusive) and exits with it.
 * - The warden's TERM trap only sets a flag and ends the sleep named in `s`
 *   with KILL; `s` is set from `$!` right after the fork and the flag checked
 *   again, so a TERM that lands between the fork and `s=$!` still ends the
 *   sleep, and `s` is cleared once the sleep is reaped, so no pid that may
 *   have been handed out again is signalled. KILL, because a TERM can reach
 *   the child between fork and exec, while it still has dash's catching
 *   handler, and be swallowed there. A flag, because a trap that trimmed
 *   could cut into a look under way. The flag, not `wait`'s status, says
 *   whether the sleep is to be waited for again: a second `wait` would not
 *   tell an interrupted wait from a finished one (both shells return the
 *   saved status again). So no `sleep` outlives a task that
 *   ended at once. Each process reaps what it started (the warden its
 *   sleeps, the wrapper its warden) before it exits: an orphan would linger
 *   as a zombie in the task's group until PID 1 reaps it, and the group
 *   would look alive to kill(-pgid, 0).
 * - On that TERM (the wrapper's, once the command is over, or the kill's
 *   group TERM) the warden looks once more and exits, and the wrapper waits
 *   for it, so the last trim lands before the exit marker.
 * - At the deadline the warden's trap becomes one that looks and exits, and
 *   the flag is checked again, so a TERM from here on ends it before it touches
 *   TIMED_OUT_FILE; it creates that file before it stops heeding TERM
 *   (`trap '' TERM`, as its own group TERM reaches it too). The wrapper
 *   waits for the warden only while TIMED_OUT_FILE is absent, so it never
 *   waits on a warden that is ending the group (and would KILL the wrapper
 *   before its marker). Through the grace the warden keeps trimming (the
 *   task may write most while it ends), but the marker may then come before
 *   its next look; it is then the only process the wrapper leaves unreaped,
 *   and the group KILL at the grace's end ends it too.
 * - `SHELL -c -- "$2"`: a shell string that begins with `-` is the command, not options to the shell.
 * - The end is recorded in space reserved at the start, so a task that
 *   filled the disk still leaves its exit code: fd 3 holds 4 placeholder
 *   bytes (EXIT_MARKER_PLACEHOLDER) and `printf '%-3s\n'` overwrites exactly
 *   those; the warden renames TIMED_OUT_FILE.reserved (made at spawn) into
 *   place, and `: >` then sets its time without needing a block.
 * - The wrapper's wait for the warden says nothing: a TERM that lands
 *   before the warden's trap is set ends it by the signal, and dash would
 *   print "Terminated" into the task's stderr (57 of 300 quick tasks, measured).
 * - A TERM to the wrapper only waits for the command, so a kill still leaves
 *   an exit marker when the command itself exits on TERM.
 * - The moment the command ends, the wrapper makes `io/ended` (empty; its
 *   file time dates the end), before it waits for the warden's last look,
 *   which can take a tenth of a second: the marker's own time comes after
 *   that. `true`, not `:`: a failed redirection on a special builtin would end
 *   the shell; on a full disk the file is simply not made, and the marker's
 *   time dates the end instead. Made with noclobber, so whatever already
 *   stands at that name (a planted symlink) is never written through. * - A wrapper that got SIGTERM asks systemd, before it writes the exit code,
 *   whether the system is stopping (`systemctl is-system-running`, bounded
 *   at 3 s, under the scope's default stop timeout of 5 s, after which
 *   systemd sends KILL: at a shutdown on a slow machine the answer took over
 *   1 s; only on a TERM, so a task's ordinary end costs nothing; only where
 *   systemd runs the host, `/run/systemd/system`, as the shim; not when
 *   `io/kill-asked` is there: the TERM is outlive's own kill, whose record
 *   says how the task ends, and the answer could outlast the kill's grace)
 *   and, if so, makes `io/host-stopping`: a clean shutdown or reboot ended
 *   the task, which is what its end must say after the reboot.
 */
export const WRAPPER_SCRIPT = `enter=$1 deadline=$2 grace=$3 timedout=$4 trim=$5 maxout=$6 cmdpid=$7 mode=$8
shift 8
exec 4>&2 2>/dev/null
if [ -n "$enter" ]; then
  echo $$ > "$enter" || { echo "outlive: could not enter the task's cgroup ($enter)" >&4; exit 125; }
fi
wd=
if [ "$deadline" -gt 0 ] || [ -n "$trim" ]; then
  (
    nap= s= stop= end=
    if [ "$deadline" -gt 0 ]; then read up _ </proc/uptime; end=$(( \${up%.*}\${up#*.} + deadline * 100 + 1 )); fi
    if [ -n "$trim" ]; then set -- "$maxout" "\${timedout%/*}"; eval "$trim"; fi
    finish() { [ -z "$nap" ] || look; exit 0; }
    naps() {
      while :; do
        t=$nap
        if [ -n "$1" ]; then
          read up _ </proc/uptime; left=$(( $1 - \${up%.*}\${up#*.} ))
          [ "$left" -gt 0 ] || return 0
          [ -n "$t" ] && [ "$t" -le "$left" ] || t=$left
        elif [ -z "$t" ]; then finish
        fi
        sleep $((t / 100)).$((t / 10 % 10))$((t % 10)) </dev/null >/dev/null 2>&1 &
        s=$!
        [ -z "$stop" ] || kill -KILL $s 2>/dev/null
        wait $s
        [ -z "$stop" ] || wait $s
        s=
        [ -z "$stop" ] || finish
        [ -z "$nap" ] || look
        [ -z "$stop" ] || finish
      done
    }
    trap 'stop=1; [ -z "$s" ] || kill -KILL $s 2>/dev/null' TERM
    naps "$end"
    trap finish TERM
    [ -z "$stop" ] || finish
    mv -f "$timedout.reserved" "$timedout" 2>/dev/null; : > "$timedout"
    trap '' TERM
    kill -TERM -$$ 2>/dev/null
    read up _ </proc/uptime
    naps $(( \${up%.*}\${up#*.} + (\${grace%.*} * 1000 + 1\${grace#*.} - 991) / 10 + 1 ))
    kill -KILL -$$ 2>/dev/null
  ) 3>&- 4>&- </dev/null >/dev/null 2>&1 &
  wd=$!
fi
trap 'got_term=1' TERM
(
  if [ -n "$cmdpid" ]; then read -r p _ </proc/self/stat; { echo "$p" > "$cmdpid"; } 2>/dev/null; fi
  if [ "$mode" = shell ]; then exec "$1" -c -- "$2"; fi
  command -v -- "$1" >/dev/null 2>&1 || { echo "outlive: $1: not found" >&2; exit 127; }
  exec "$@"
) 2>&4 3>&- 4>&-
rc=$?
{ set -C; true >"\${timedout%/*}/ended"; } 2>/dev/null; set +C
if [ -n "$got_term" ] && [ ! -e "\${timedout%/*}/kill-asked" ] && [ -d /run/systemd/system ] && [ "$(timeout 3 systemctl is-system-running 2>/dev/null)" = stopping ]; then
  { set -C; true >"\${timedout%/*}/host-stopping"; } 2>/dev/null; set +C
fi
if [ -n "$wd" ]; then kill $wd 2>/dev/null; [ -e "$timedout" ] || wait $wd 2>/dev/null; fi
printf '%-3s\n' "$rc" >&3
exit "$rc"`;

/** The wrapper's `$0`: how a task's wrapper is told from other processes in its cgroup. */
export const WRAPPER_NAME = "outlive-task";

export interface WrapperArgs {
  command: TaskCommand;
  /** `cgroup.procs` to enter, or null. */
  enterCgroupProcs: string | null;
  /** Whole seconds until the warden ends the task; 0 for none. */
  deadlineSeconds: number;
  graceMs: number;
  timedOutFile: string;
  /** The output trimmer and its bound per stream, or null to keep all output. */
  trim?: { script: string; maxBytes: number } | null;
  /** Where the command's own pid is written before it runs (`io/command-pid`), or null for none. */
  commandPidFile?: string | null;
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
    a.commandPidFile ?? "",
    ...tail,
  ];
}
