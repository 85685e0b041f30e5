#!/usr/bin/env bash
# test_nodeloss_bench.sh -- the node-loss benchmark's row and figure
# (experiments/bench/nodeloss_row.py, analysis/fig_nodeloss.py) on
# synthetic run directories, no MPI.
#
# Pass rules: the header is the columns of docs/formats.md; a recovered
# run (kills.csv of a node: 4 processes on one host; recovery.csv of two
# recoveries on two ranks; summary.txt with 2 verify errors and 3 not
# found) gives killed 4, that host, lost 5, detect first/last the min/max
# over the first recovery, recoveries 2 and each phase summed per rank and
# maxed over ranks; an aborted run (kills.csv only) gives outcome aborted,
# NA for everything it did not write, and kvrun's message without its
# prefix, quoted; a run the MPI's probe said it cannot support gives
# outcome unsupported, no kill, 0 recoveries, NA elsewhere and the probe's
# answer as message; the figure script writes a PNG for a file whose node
# runs all aborted or were unsupported, and exits non-zero with a message
# for an empty one.
set -uo pipefail
export LOAD_WAIT=0 BUSY_SAMPLE=0.1   # a test times nothing: no wait for idle cores (cells.sh)
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROW=(python3 "$ROOT/experiments/bench/nodeloss_row.py")
PY=${PYTHON:-$(python3 "$ROOT/analysis/pyfind.py")}
T=$(mktemp -d "${TMPDIR:-/tmp}/test_nodeloss_bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
want() {  # LABEL GOT WANTED
  if [ "$2" = "$3" ]; then echo "ok:   $1"; else fail "$1: got '$2', wanted '$3'"; fi
}

want header "$("${ROW[@]}" --header)" \
  "variant,rep,seed,ranks,nodes,outcome,killed,victim_hosts,lost,detect_first_us,detect_last_us,recoveries,revoke_us,shrink_us,agree_us,windows_us,rereplicate_us,total_us,seconds,message"

d=$T/recovered; mkdir -p "$d"
cat > "$d/kills.csv" <<'EOF'
kill,target_rank,pid,host,signal,role,time_ns
0,-1,100,kvnode2,KILL,daemon-parent,10000001000
0,-1,101,kvnode2,KILL,daemon,10000002000
0,3,102,kvnode2,KILL,rank,10000003000
0,2,103,kvnode2,KILL,rank,10000004000
EOF
cat > "$d/recovery.csv" <<'EOF'
failure,rank,epoch,failed_ranks,detect_us,revoke_us,shrink_us,agree_us,windows_us,rereplicate_us,total_us,pairs_restored,restarts
0,0,1,1,5000,10,100,20,1000,300,1430,50,0
0,1,1,1,9000,12,90,25,900,400,1427,60,0
1,0,2,1,NA,1,10,2,100,30,143,5,0
1,1,2,1,2000,1,20,2,100,30,153,6,0
EOF
echo "[OVERALL], Operations, 100 (failed 0, retried 1, verify errors 2, not found 3)" > "$d/summary.txt"
want "recovered run" "$("${ROW[@]}" --dir "$d" --variant node --rep 1 --seed 1 --ranks 6 --nodes 3 --rc 0 \
  --seconds 30.5 --kvrun 'kvrun: FINISHED PASS kv_driver (exit 0) in 30.5s')" \
  "node,1,1,6,3,pass,4,kvnode2,5,5000,9000,2,13,110,27,1100,430,1580,30.5,FINISHED PASS kv_driver (exit 0) in 30.5s"

d=$T/aborted; mkdir -p "$d"
head -2 "$T/recovered/kills.csv" > "$d/kills.csv"
want "aborted run" "$("${ROW[@]}" --dir "$d" --variant node --rep 2 --seed 2 --ranks 6 --nodes 3 --rc 4 \
  --seconds 9.1 --kvrun 'kvrun: ABORTED by the launcher (exit 0, no verdict): PRTE has lost communication, on node kvnode2')" \
  'node,2,2,6,3,aborted,1,kvnode2,NA,NA,NA,NA,NA,NA,NA,NA,NA,NA,9.1,"ABORTED by the launcher (exit 0, no verdict): PRTE has lost communication, on node kvnode2"'
want "no kill log, unknown exit" "$("${ROW[@]}" --dir "$T/none" --variant rank --rep 1 --seed 1 --ranks 6 \
  --nodes 3 --rc 9 --seconds 1 | cut -d, -f6-9)" "error,NA,NA,NA"
want "unsupported run" "$("${ROW[@]}" --variant node --rep 3 --seed 3 --ranks 6 --nodes 3 \
  --unsupported "not run: the MPI's node_loss probe says 'ends the job'")" \
  "node,3,3,6,3,unsupported,NA,NA,NA,NA,NA,0,NA,NA,NA,NA,NA,NA,NA,not run: the MPI's node_loss probe says 'ends the job'"

mkdir -p "$T/bench"
{ "${ROW[@]}" --header
  "${ROW[@]}" --variant node --rep 4 --seed 4 --ranks 6 --nodes 3 --unsupported "not run"
  for r in 1 2 3; do
    "${ROW[@]}" --dir "$T/aborted" --variant node --rep $r --seed $r --ranks 6 --nodes 3 --rc 4 --seconds 9 --kvrun 'kvrun: ABORTED x'
    "${ROW[@]}" --dir "$T/recovered" --variant rank --rep $r --seed $r --ranks 6 --nodes 3 --rc 0 --seconds 30 --kvrun 'kvrun: FINISHED PASS'
  done; } > "$T/bench/nodeloss.csv"
if out=$("$PY" "$ROOT/analysis/fig_nodeloss.py" "$T/bench" "$T/fig" 2>&1) && [ -s "$T/fig/nodeloss.png" ] &&
   [ "$(od -An -tx1 -N4 "$T/fig/nodeloss.png" | tr -d ' ')" = 89504e47 ]; then
  echo "ok:   figure: $out"
else fail "figure: $out"; fi
"${ROW[@]}" --header > "$T/bench/nodeloss.csv"
if out=$("$PY" "$ROOT/analysis/fig_nodeloss.py" "$T/bench" "$T/fig" 2>&1); then fail "an empty file drew a figure: $out"
elif grep -q "no runs in" <<<"$out" && ! grep -q Traceback <<<"$out"; then echo "ok:   empty file: $out"
else fail "empty file: $out"; fi

if [ "$FAILS" -gt 0 ]; then echo "test_nodeloss_bench: $FAILS check(s) failed"; exit 1; fi
echo "test_nodeloss_bench: all checks passed"
