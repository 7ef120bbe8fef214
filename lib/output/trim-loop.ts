/**
 * The shell program that keeps a task's output files bounded, run by the
 * wrapper beside the command (in a fork of the wrapper, with MAX and IO_DIR
 * as $1 and $2; on its own, `/bin/sh -c TRIM_SCRIPT outlive-trim MAX
 * IO_DIR`), in the task's own group and cgroup, so it lives exactly as long
 * as the task and dies with the task's kill.
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
 * - It sleeps before its first look, and two empty files cost no fork
 *   (`[ -s ]`), so a task that ends at once is not held up by it.
 * - It checks every 100 ms while a file grows and backs off to 1.6 s while
 *   both are quiet: an idle task costs one fork every 1.6 s, and a look at
 *   both files one `stat`. Checking more often lowered the peak for a task
 *   writing at page-cache speed but cost it throughput (bench/output-bound.ts).
 * - On TERM (the wrapper when the command ends, or the kill's group TERM)
 *   it ends its sleep with KILL, reaps it, trims once more and exits: an
 *   orphaned sleep would linger in the task's group or scope and be taken
 *   for something the task left running. The trap only sets a flag and
 *   kills the sleep named in `s`, which is set right after the fork and
 *   checked again, so a TERM that lands between the fork and `s=$!` still
 *   ends the sleep; `s` is cleared once the sleep is reaped, so no pid that
 *   may have been handed out again is ever signalled.
 * - A file system that cannot punch holes leaves the files whole; the
 *   trimmer then writes why in `io/trim-failed` and stops trying (the dropped marker it
 *   wrote then only makes readers skip bytes that are still there, never
 *   read a hole).
 */
export const TRIM_SCRIPT = `max=$1 io=$2
umask 077
s= stop= nap=0.1 d_stdout=0 d_stderr=0 z_stdout=0 z_stderr=0 grew=
look() {
  [ -s "$io/stdout" ] || [ -s "$io/stderr" ] || return 0
  # One stat for both; should one file be gone, each on its own (a missing one counts as empty).
  sizes=$(stat -c %s "$io/stdout" "$io/stderr" 2>/dev/null) ||
    sizes="$(stat -c %s "$io/stdout" 2>/dev/null || echo 0) $(stat -c %s "$io/stderr" 2>/dev/null || echo 0)"
  set -- $sizes
  trim stdout "$1"
  trim stderr "$2"
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
    exit 0
  fi
}
trap 'stop=1; [ -z "$s" ] || kill -KILL $s 2>/dev/null' TERM
finish() { look; exit 0; }
while :; do
  sleep $nap </dev/null >/dev/null 2>&1 &
  s=$!
  [ -z "$stop" ] || kill -KILL $s 2>/dev/null
  wait $s
  [ -z "$stop" ] || wait $s
  s=
  [ -z "$stop" ] || finish
  grew=
  look
  [ -z "$stop" ] || finish
  if [ -n "$grew" ]; then nap=0.1
  else case $nap in 0.1) nap=0.2;; 0.2) nap=0.4;; 0.4) nap=0.8;; *) nap=1.6;; esac
  fi
done`;

/** The smallest bound: one block of the file system, the unit a hole is punched in. */
export const MIN_OUTPUT_BYTES = 4096;
