#!/usr/bin/env bash
# A naive idle reaper, as in field report 2 (NOT outlive), in bash: it starts an
# agent harness, and once the harness has been idle for IDLE seconds it ends the
# harness's process group and process tree, whatever runs under it.
#   naive-reaper.sh IDLE [--ask CMD…] -- HARNESS ARGV…
# With --ask, it first runs `CMD… PID` and ends the harness only when that
# prints "decision: retire" (outlive's census: `outlive census PID --adopted`).
# stdout: harness PID · retired PID · kept PID: REASON
set -u
idle=$1; shift
ask=()
if [ "${1:-}" = "--ask" ]; then
  shift
  while [ "$1" != "--" ]; do ask+=("$1"); shift; done
fi
shift # --
setsid "$@" &
harness=$!
echo "harness $harness"

tree() { # the pid and every descendant, by parent chain
  echo "$1"
  for child in $(ps -o pid= --ppid "$1"); do tree "$child"; done
}

sleep "$idle"
if [ ${#ask[@]} -gt 0 ]; then
  answer=$("${ask[@]}" "$harness" 2>&1)
  if ! grep -q "^decision: retire" <<<"$answer"; then
    echo "kept $harness: $(grep '^decision' <<<"$answer" || echo "$answer" | tail -1)"
    wait
    exit 0
  fi
fi
pids=$(tree "$harness")
kill -TERM -- "-$harness" 2>/dev/null
kill -TERM $pids 2>/dev/null
echo "retired $harness"
wait
