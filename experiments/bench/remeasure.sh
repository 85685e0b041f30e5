#!/usr/bin/env bash
# remeasure.sh -- `make remeasure`: the stale result files made again at
# the current revision, one chunk of at most MINUTES (default 19) at a time.
#
# The files are those `make stale` lists (report.py stale --names; the
# files kept as history aside), in its order.  Each one's record names the
# command that made it; that command runs again with MINUTES set to what is
# left of the chunk.  A benchmark that resumes (cells.sh, the soaks, the
# soaks across hosts) goes on from where it stopped and says what is left;
# one that does not is made again whole, so it must fit in a chunk.  A
# cells.sh point that would not end within the chunk is left for the next
# (CELLS_FIT=strict), which starts with it.  A
# command that is not a `make bench` or `make soak` line is not run: it is
# named, with its command, for a person to run.  The chunk ends when its
# minutes are spent; then `make report`, a commit, and the same command
# again for the next chunk.  At the end it prints what is still stale and,
# unless DRY, appends the chunk to results/bench/remeasure.log (start, end,
# minutes, revision, how many files are still stale; then a line
# "  file: NAME SECONDS s, whole|chunked" for each file it ran, whole when
# its record has no chunk: or resumed: line, as for a benchmark that does
# not resume): the log of a whole re-measurement, chunk by chunk.  A file
# made whole is not started in a chunk whose minutes left are fewer than
# its last making took by this log.
#   ONLY='NAME.csv ...' limits it to those files; DRY=1 prints the plan.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
MINUTES=${MINUTES:-19}
start=$(date +%s) ran=()
end=$(( start + 60 * MINUTES ))
mapfile -t stale < <(python3 experiments/bench/report.py stale --names)
[ -n "${ONLY:-}" ] && mapfile -t stale < <(printf '%s\n' "${stale[@]}" | grep -xF -f <(tr ' ' '\n' <<<"$ONLY"))
echo "remeasure: ${#stale[@]} stale files, a chunk of $MINUTES minutes"
for f in "${stale[@]}"; do
  [[ $f == *-bins.csv ]] && continue  # made with ${f%-bins.csv}.csv, by its command
  cmd=$(sed -n 's/^command: //p' "results/bench/${f%.csv}.meta" 2>/dev/null | head -1)
  case $cmd in
    *"make bench"|*"make soak") ;;
    *) echo "remeasure: $f: not a make bench or make soak line, run it by hand: ${cmd:-no record}"; continue ;;
  esac
  left=$(( (end - $(date +%s)) / 60 ))
  if [ "$left" -lt 1 ]; then echo "remeasure: the chunk is spent; the same command goes on"; break; fi
  # a file made whole (its record has no chunk: or resumed: line) waits for
  # a chunk that holds the time its last making took here
  took=$(sed -n "s/^  file: ${f//./\\.} \([0-9]*\) s, whole$/\1/p" results/bench/remeasure.log 2>/dev/null | tail -1)
  if [ -n "$took" ] && [ $((took / 60 + 1)) -gt "$left" ]; then
    echo "remeasure: $f took $took s last time, more than the $left minutes left: the next chunk"; continue
  fi
  echo "remeasure: $f ($left minutes left): $cmd"
  [ "${DRY:-0}" = 1 ] && continue
  t0=$(date +%s)
  env MINUTES="$left" CELLS_FIT=strict bash -c "$cmd" || echo "remeasure: $f: the command exited $?"
  how=whole; grep -q '^chunk: \|^resumed:' "results/bench/${f%.csv}.meta" 2>/dev/null && how=chunked
  ran+=("$f $(( $(date +%s) - t0 )) s, $how")
done
echo "remeasure: still stale:"
python3 experiments/bench/report.py stale | tail -1
if [ "${DRY:-0}" != 1 ] && [ ${#ran[@]} -gt 0 ]; then
  now=$(date +%s)
  { echo "$(date -u -d "@$start" +%FT%TZ) to $(date -u -d "@$now" +%FT%TZ): $(( (now - start + 59) / 60 )) min at" \
      "$(git rev-parse --short HEAD); ran ${#ran[@]} files; $(python3 experiments/bench/report.py stale --names | wc -l) stale after"
    printf '  file: %s\n' "${ran[@]}"; } >> results/bench/remeasure.log
fi
