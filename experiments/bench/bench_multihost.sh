#!/usr/bin/env bash
# bench_multihost.sh -- the store across hosts (BENCH=multihost make bench).
#
# On a test cluster of its own (scripts/vcluster up 3 --no-slurm, own state
# directory and bridge, torn down at the end whatever happens), one host's
# numbers beside the cluster's, interleaved run by run so that the machine's
# noise falls on both alike:
#   store-vs-raw  bench_store_raw (kv_get r=1 / kv_put r=2 against the raw
#                 RMA they need), ranks 0 and 1 on one host and on two
#                 hosts, backends allocate and create (across hosts both are
#                 osc/rdma), MH_REPS (3) runs of MH_OPS (2000) operations x 5
#                 rounds each;
#   recovery      bench_recovery (MH_PAIRS (2000) pairs, the last rank
#                 killed while the others wait in kv_poll, every phase
#                 timed), every variant, 3 ranks (spare: 4) one per host and
#                 on one host, MH_RECOVERY_REPS (5) runs each;
#   soak          the one-host soak's single-kill runs (tests/history/run.sh
#                 --scenario single: random operations, one rank SIGKILLed
#                 at a random instant, the history checked), every variant,
#                 backend allocate (osc/rdma across hosts), ranks spread over
#                 the 3 hosts one by one, MH_RUNS (50) runs each: the hang
#                 rate (outcome hung: no verdict within MH_TIMEOUT, 40 s, the
#                 one-host soak's limit; a passing run took 6-7 s);
#                 MH_SCENARIO=node loses a whole node instead (run.sh's
#                 scenario node: a host's ranks and daemon, 6 ranks, 2 a
#                 host; needs the probe's node_loss to say `survives`);
#                 MH_SCENARIO=node-stop stops a whole node for 0.2-0.8 s
#                 instead (a straggler node: nothing may recover),
#                 partition cuts a node off the network for 0.2-0.8 s (the
#                 same), cut for 8 s (the node is lost: detected by the
#                 runtime's keepalive), vanish stops a node's processes and
#                 cuts it off at once (lost the same way, its processes
#                 killed 8 s later), daemon kills a node's daemon alone,
#                 slow makes a node's link slow and lossy for 0.5-1.5 s
#                 (nothing may recover), node2 loses two nodes at once and
#                 cascade a second node 20-80 ms after the first (both with
#                 3 copies, so that every pair keeps one).
#                 MH_BACKEND=create makes the windows with MPI_Win_create
#                 (variant online then keeps its window through the loss).
#                 MH_PARTS=soak alone resumes a file of the same header
#                 and record (scripts/provenance --matches; the seeds done
#                 are skipped), and MINUTES (0: no limit)
#                 stops it between runs, so it goes in chunks.
# Before them scripts/mpiprobe classifies the MPI on the cluster (its record
# beside the CSV, multihost.mpiprobe.json): recovery and soak runs need its
# rank_loss probe to say `survives`, variant proposed its proposed_rma to
# say `yes`; a run it cannot support is not run, its row says outcome
# `unsupported`.  MH_PARTS narrows the parts, MH_VARIANTS the variants.  Output:
# results/bench/multihost.csv (MH_OUT), one row per measurement:
#   kind,hosts,ranks,variant,backend,repetition,operation,store_us,raw_us,
#   detect_us,revoke_us,shrink_us,agree_us,windows_us,rereplicate_us,
#   total_us,lost,outcome,seconds
# (NA where a column does not apply; operation is get/put, kill, or the
# soak scenario; repetition is the soak's seed; a soak row's detect_us is
# run.sh's detect_ms: from the fault to the last survivor's notice), and beside it the .meta
# file of scripts/provenance; the files of every soak run that did not pass
# go to results/bench/multihost-logs/.  The full set takes about 5 hours on
# this 2-core machine, most of it the soak's hung runs (each runs into its
# limit, then its stacks are taken).  Needs root (namespaces).
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=${KV_BUILD:-$ROOT/build}
BIN=$B/bin VC=$ROOT/scripts/vcluster KVRUN=$ROOT/scripts/kvrun
OUT=${MH_OUT:-$ROOT/results/bench/multihost.csv}
PARTS=${MH_PARTS:-store-vs-raw recovery soak}
VARIANTS=${MH_VARIANTS:-recreate-copy recreate-inplace recreate-free spare proposed}
REPS=${MH_REPS:-3} OPS=${MH_OPS:-2000} PAIRS=${MH_PAIRS:-2000}
RECOVERY_REPS=${MH_RECOVERY_REPS:-5} RUNS=${MH_RUNS:-50} TIMEOUT=${MH_TIMEOUT:-40}
SCENARIO=${MH_SCENARIO:-single}
SOAK_BACKEND=${MH_BACKEND:-allocate}
case $SOAK_BACKEND in allocate|create) ;; *) echo "bench_multihost: MH_BACKEND allocate or create" >&2; exit 2 ;; esac
R=2
case $SCENARIO in
  single) NP=() ;;
  node|node-stop|partition|cut|vanish|daemon|slow) NP=(--np 6) ;;
  node2|cascade) NP=(--np 6) R=3 ;;
  *) echo "bench_multihost: MH_SCENARIO single, node, node-stop, partition, cut, vanish, daemon, slow, node2 or cascade" >&2; exit 2 ;;
esac
HEADER=kind,hosts,ranks,variant,backend,repetition,operation,store_us,raw_us,detect_us,revoke_us,shrink_us,agree_us,windows_us,rereplicate_us,total_us,lost,outcome,seconds
CMD="MH_PARTS='$PARTS' MH_VARIANTS='$VARIANTS' MH_REPS=$REPS MH_OPS=$OPS MH_PAIRS=$PAIRS MH_RECOVERY_REPS=$RECOVERY_REPS MH_RUNS=$RUNS MH_TIMEOUT=$TIMEOUT MH_SCENARIO=$SCENARIO BENCH=multihost make bench"
[ "$SOAK_BACKEND" = allocate ] || CMD="MH_BACKEND=$SOAK_BACKEND $CMD"
[ -z "${MH_OUT:-}" ] || CMD="MH_OUT=${MH_OUT#"$ROOT"/} $CMD"  # the file it wrote, in the record too
want() { [[ " $PARTS " == *" $1 "* ]]; }

[ "$(id -u)" -eq 0 ] || { echo "bench_multihost: needs root (network namespaces)" >&2; exit 1; }
for p in bench_store_raw bench_recovery; do
  [ -x "$BIN/$p" ] || { echo "bench_multihost: not built: $BIN/$p (run make)" >&2; exit 1; }
done
export KV_CLUSTER_DIR KV_CLUSTER_BRIDGE=kvbrb
KV_CLUSTER_DIR=$(mktemp -d /tmp/kvcluster-bench.XXXXXX)
chmod 0755 "$KV_CLUSTER_DIR"
# A finalize that hangs after a verdict is cut after 2 s (kvrun's grace).
export KVRUN_GRACE=${KVRUN_GRACE:-2}
TMP=$KV_CLUSTER_DIR/work; mkdir -p "$TMP"
trap '"$VC" down >/dev/null 2>&1; rm -rf "$KV_CLUSTER_DIR"' EXIT
"$VC" up 3 --no-slurm >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log" >&2; exit 1; }
mkdir -p "$(dirname "$OUT")"
if [ "$PARTS" = soak ] && [ -s "$OUT" ] && [ "$(head -1 "$OUT")" = "$HEADER" ] &&
   "$ROOT/scripts/provenance" --matches "${OUT%.csv}.meta" "$CMD"; then
  # a soak alone resumes, as make soak does: the seeds done are skipped,
  # when its record is what would be recorded now (the same measured code,
  # build, machine and command: scripts/provenance), else it starts anew
  { echo "resumed:"; "$ROOT/scripts/provenance" "$CMD" | sed 's/^/  /'; } >> "${OUT%.csv}.meta"
else
  echo "$HEADER" > "$OUT"
  "$ROOT/scripts/provenance" "$CMD" > "${OUT%.csv}.meta"
fi
STOP=0; [ "${MINUTES:-0}" -gt 0 ] && STOP=$(( $(date +%s) + 60 * MINUTES ))
PROBE=${OUT%.csv}.mpiprobe.json
"$ROOT/scripts/mpiprobe" --cluster --out "$PROBE" || { echo "bench_multihost: the MPI probe failed" >&2; exit 1; }
# unsupported VARIANT: why the probed MPI cannot support a run with a kill of
# that variant (nothing when it can)
unsupported() {
  local needs=(rank_loss=survives) n says
  case $SCENARIO in node|node2|cascade) needs+=(node_loss=survives) ;; esac
  case $1 in proposed|online) needs+=(proposed_rma=yes) ;; esac
  for n in "${needs[@]}"; do
    says=$("$ROOT/scripts/mpiprobe" --says "$PROBE" "${n%%=*}") || says=nothing
    [ "$says" = "${n#*=}" ] || { echo "the MPI's ${n%%=*} probe says '$says'"; return; }
  done
}

# run_on HOSTS N TIMEOUT PROGRAM...: kvrun of N ranks on HOSTS hosts: this
# machine alone for 1; one rank per host when N = HOSTS; else round-robin
# over all the hosts (PRRTE's by-node mapping; on one host it would undo
# --oversubscribe), so that victims die on every host, not only the head.
run_on() {
  local h=$1 n=$2 t=$3
  shift 3
  if [ "$h" = 1 ]; then "$KVRUN" -n "$n" --timeout "$t" -- "$@"
  elif [ "$n" -eq "$h" ]; then "$KVRUN" --cluster --nodes "$h" --ppn 1 --timeout "$t" -- "$@"
  else PRTE_MCA_rmaps_default_mapping_policy=node "$KVRUN" --cluster -n "$n" --timeout "$t" -- "$@"; fi
}
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }

# store-vs-raw: bench_store_raw appends "op,backend,ranks,bytes,store,raw,ratio"
raw_point() {  # HOSTS BACKEND REP
  local f=$TMP/raw.csv t0 st
  : > "$f"
  t0=$(date +%s%N)
  run_on "$1" 2 600 "$BIN/bench_store_raw" "$2" "$f" "$OPS" 5 >"$TMP/raw.log" 2>&1
  st=$?
  awk -F, -v h="$1" -v r="$3" -v s="$(secs "$(ms_since "$t0")")" -v ok=$st \
    '{ printf "store-vs-raw,%s,%s,recreate-copy,%s,%s,%s,%s,%s,NA,NA,NA,NA,NA,NA,NA,NA,%s,%s\n",
       h, $3, $2, r, $1, $5, $6, ok == 0 ? "pass" : "failed", s }' "$f" | tee -a "$OUT"
  [ -s "$f" ] || echo "store-vs-raw,$1,2,recreate-copy,$2,$3,NA,NA,NA,NA,NA,NA,NA,NA,NA,NA,NA,failed,NA" | tee -a "$OUT"
}

# recovery: bench_recovery appends "variant,backend,ranks,pairs,rep,detect,
# revoke,shrink,agree,windows,rerep,total,restored,lost,hang"
recovery_point() {  # HOSTS VARIANT REP
  local v=$2 np=3 sp=0 f=$TMP/rec.csv t0 st o
  [ "$v" = spare ] && np=4 sp=1
  if [ -n "$(unsupported "$v")" ]; then
    echo "recovery,$1,$((np - sp)),$v,allocate,$3,kill,NA,NA,NA,NA,NA,NA,NA,NA,NA,NA,unsupported,NA" | tee -a "$OUT"
    return
  fi
  : > "$f"; rm -f "$TMP/kill.log"
  t0=$(date +%s%N)
  # (in the command: the environment does not travel to other hosts)
  run_on "$1" "$np" 300 env KV_SPARES=$sp KV_KILL_LOG="$TMP/kill.log" \
    "$BIN/bench_recovery" "$v" allocate "$PAIRS" "$3" "$f" >"$TMP/rec.log" 2>&1
  st=$?
  case $st in 0) o=pass ;; 3) o=hung ;; 2) o=crashed ;; *) o=failed ;; esac
  if [ -s "$f" ]; then
    awk -F, -v h="$1" -v o="$o" -v s="$(secs "$(ms_since "$t0")")" \
      '{ printf "recovery,%s,%s,%s,%s,%s,kill,NA,NA,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n",
         h, $3, $1, $2, $5, $6, $7, $8, $9, $10, $11, $12, $14, o, s }' "$f" | tee -a "$OUT"
  else
    echo "recovery,$1,$((np - sp)),$v,allocate,$3,kill,NA,NA,NA,NA,NA,NA,NA,NA,NA,NA,$o,$(secs "$(ms_since "$t0")")" | tee -a "$OUT"
  fi
}

# soak: one tests/history/run.sh run across the cluster (KV_CLUSTER=1)
soak_point() {  # VARIANT SEED
  local v=$1 sp=0 t0 line o get
  [ "$v" = spare ] && sp=1
  grep -q "^soak,3,[^,]*,$v,$SOAK_BACKEND,$2,$SCENARIO," "$OUT" && return  # done before: resume
  if [ "$STOP" -gt 0 ] && [ "$(date +%s)" -ge "$STOP" ]; then
    echo "bench_multihost: stopped after $MINUTES minutes; the same command resumes"
    return
  fi
  if [ -n "$(unsupported "$v")" ]; then
    echo "soak,3,NA,$v,$SOAK_BACKEND,$2,$SCENARIO,NA,NA,NA,NA,NA,NA,NA,NA,NA,NA,unsupported,NA" | tee -a "$OUT"
    return
  fi
  t0=$(date +%s%N)
  # KV_TRACE: each rank's recovery steps go to its stderr, kept with the
  # logs of a run that does not pass (a rare failure is seldom seen twice)
  line=$(KV_TRACE=${KV_TRACE:-1} KV_CLUSTER=1 PRTE_MCA_rmaps_default_mapping_policy=node bash "$ROOT/tests/history/run.sh" --backend "$SOAK_BACKEND" --variant "$v" --r "$R" \
         --spares "$sp" --scenario "$SCENARIO" "${NP[@]}" --seconds 1.5 --seed "$2" --timeout "$TIMEOUT" \
         --out "$TMP/soak")
  o=$(sed -n 's/.*outcome=\([a-z]*\).*/\1/p' <<<"$line")
  get() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
  local det; det=$(get detect_ms); [ "${det:-NA}" = NA ] || det=$(awk -v ms="$det" 'BEGIN { printf "%.0f", ms * 1000 }')
  echo "soak,3,$(get ranks),$v,$SOAK_BACKEND,$2,$SCENARIO,NA,NA,${det:-NA},NA,NA,NA,NA,NA,NA,NA,${o:-error},$(secs "$(ms_since "$t0")")" | tee -a "$OUT"
  if [ "${o:-error}" != pass ]; then  # keep the evidence
    mkdir -p "$(dirname "$OUT")/multihost-logs"
    local tag=$v; [ "$SCENARIO" = single ] || tag=$v-$SCENARIO
    [ "$SOAK_BACKEND" = allocate ] || tag=$tag-$SOAK_BACKEND
    rm -rf "$(dirname "$OUT")/multihost-logs/$tag-seed$2"
    mv "$TMP/soak" "$(dirname "$OUT")/multihost-logs/$tag-seed$2"
  fi
  rm -rf "$TMP/soak"
}

if want store-vs-raw; then
  for rep in $(seq "$REPS"); do
    for b in allocate create; do
      for h in 1 2; do raw_point "$h" "$b" "$rep"; done
    done
  done
fi
if want recovery; then
  for rep in $(seq "$RECOVERY_REPS"); do
    for v in $VARIANTS; do
      for h in 1 3; do recovery_point "$h" "$v" "$rep"; done
    done
  done
fi
if want soak; then
  for seed in $(seq "$RUNS"); do
    for v in $VARIANTS; do soak_point "$v" "$seed"; done
  done
fi
python3 "$ROOT/experiments/bench/report.py" print multihost --file "$OUT"
echo "wrote $OUT"
