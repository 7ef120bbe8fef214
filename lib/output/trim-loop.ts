/**
 * The output trimmer's program: what the wrapper's warden (lib/spawn/wrapper.ts)
 * runs beside the command to keep a task's output files bounded. The warden
 * evals it once, in its own shell, with MAX and IO_DIR as $1 and $2, then
 * calls `look` after every nap and naps for the `nap` centiseconds `look`
 * leaves behind; an empty `nap` tells it to stop trimming. It is not a loop
 * of its own: the warden's one loop serves the deadline and the trim, so a
 * task costs one background shell and one `sleep` at a time, not two of each.
 * It runs in the task's own group and cgroup, so it lives exactly as long as
 * the task and dies with the task's kill.
 *
 * - Offsets stay absolute for the life of the task (the file's size is
 *   everything ever written), and the oldest bytes are freed by punching
 *   holes at the head (`fallocate --punch-hole`), so the task's O_APPEND
 *   writes are never blocked, moved or truncated under it.
 * - Before each punch it records the new dropped-up-to offset in
 *   `STREAM.dropped` (temp file + rename): a reader that finds that offset
 *   above what it just read knows those bytes may be zeros and were lost.
 *   Written first, so no punched byte is ever passed off as output.
 * - Only whole 4096-byte blocks are cut, so at least MAX bytes stay.
 * - The first `nap` comes before the first look, and two empty files cost
 *   no fork (`[ -s ]`), so a task that ends at once is not held up by it.
 * - `nap` is 100 ms while a file grows and backs off to 1.6 s while both
 *   are quiet: an idle task costs one fork every 1.6 s, and a look at both
 *   files one `stat`. Checking more often lowered the peak for a task
 *   writing at page-cache speed but cost it throughput (bench/output-rotation.ts).
 * - The warden looks once more when the command is over (the wrapper's TERM)
 *   or the kill's group TERM reaches it, before it exits, and the wrapper
 *   waits for that look before its exit marker; after a deadline it looks
 *   through the grace, since the task may write most while it ends (the
 *   wrapper does not wait for it then: see the warden).
 * - Names are its own but for `nap`, `look` and `trim`: the warden's
 *   variables (`s`, `stop`, `end`, `left`, `t`, `up`, the wrapper's
 *   arguments) share the shell with it.
 * - A file system that cannot punch holes leaves the files whole; the
 *   trimmer then writes why in `io/trim-failed` and stops trying (the dropped marker it
 *   wrote then only makes readers skip bytes that are still there, never
 *   read a hole). It empties `nap` rather than exits: the warden's deadline
 *   must still fire.
 */
export const TRIM_SCRIPT = `max=$1 io=$2
umask 077
d_stdout=0 d_stderr=0 z_stdout=0 z_stderr=0 grew=
look() {
  grew=
  scan || { nap=; return 0; }
  if [ -n "$grew" ]; then nap=10
  else case $nap in 10) nap=20;; 20) nap=40;; 40) nap=80;; *) nap=160;; esac
  fi
}
scan() {
  [ -s "$io/stdout" ] || [ -s "$io/stderr" ] || return 0
  # One stat for both; should one file be gone, each on its own (a missing one counts as empty).
  sizes=$(stat -c %s "$io/stdout" "$io/stderr" 2>/dev/null) ||
    sizes="$(stat -c %s "$io/stdout" 2>/dev/null || echo 0) $(stat -c %s "$io/stderr" 2>/dev/null || echo 0)"
  set -- $sizes
  trim stdout "$1" && trim stderr "$2"
}
trim() {
  size=$2
  eval "was=\\$z_$1 done=\\$d_$1"
  [ "$size" = "$was" ] || grew=1
  eval "z_$1=$size"
  cut=$(( (size - max) / 4096 * 4096 ))
  [ "$cut" -gt "$done" ] || return 0
  printf '%s\\n' "$cut" > "$io/$1.dropped.tmp" && mv -f "$io/$1.dropped.tmp" "$io/$1.dropped" || return 0
  if fallocate --punch-hole --offset "$done" --length $((cut - done)) "$io/$1" 2>/dev/null; then
    eval "d_$1=$cut"
  else
    echo "fallocate --punch-hole failed on $io/$1" > "$io/trim-failed"
    return 1
  fi
}
nap=10`;

/** The smallest bound: one block of the file system, the unit a hole is punched in. */
export const MIN_OUTPUT_BYTES = 4096;
