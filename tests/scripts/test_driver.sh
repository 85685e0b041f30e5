#!/usr/bin/env bash
# test_driver.sh -- the benchmark driver as a user runs it.
#
# Pass rules:
#  1. a 4-rank run of each YCSB workload A-F finishes and writes every file
#     of docs/formats.md with its exact header, non-empty; the
#     timeline's operations add up to the operation count of meta.json and
#     of latency.csv (op all, phase all), and no value read failed its check;
#  2. bad settings each get their own message and exit status 2: an unknown
#     setting, a malformed number, an unknown workload, an unknown variant,
#     a key larger than max_key, replicas above the ranks, an unknown line
#     in a config file (named with its line number);
#  3. the external injector (kv_inject) kills rank 2 by pid from the table
#     the ranks publish; the run notices it, recovers and finishes, and the
#     kill log names rank 2 and its pid;
#  4. a rank stopped with SIGSTOP is not noticed by ULFM: the run ends at
#     its deadline and is reported HUNG, not passed;
#  5. kvrun stopped from outside (SIGTERM) takes its run along: exit 143,
#     and no process of the run is left;
#  6. variant spare with one rank killed: every rank's detection time in
#     recovery.csv, the idle spare's included, lies within the run.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUN=$ROOT/scripts/kvrun DRV=${KV_BUILD:-$ROOT/build}/bin/kv_driver INJ=${KV_BUILD:-$ROOT/build}/bin/kv_inject
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
COMMON="store.slots_per_rank=16384 store.max_value=128 workload.records=4000 workload.value_bytes=64 driver.progress=0"

for w in a b c d e f; do
  d=$T/ycsb-$w
  # shellcheck disable=SC2086
  "$RUN" -n 4 --timeout 90 -- "$DRV" workload.workload=$w workload.operations=8000 $COMMON \
      driver.out="$d" > "$T/$w.log" 2>&1 || { tail -5 "$T/$w.log"; fail "workload $w did not finish"; }
  for f in meta.json timeline.csv latency.csv latency_hist.csv recovery.csv papi.csv summary.txt; do
    [ -s "$d/$f" ] || fail "workload $w: $f missing or empty"
  done
  [ "$(head -1 "$d/timeline.csv")" = "rank,t_start_s,t_end_s,ops,read_ops,write_ops,failed_ops" ] || fail "$w timeline header"
  [ "$(head -1 "$d/latency.csv")" = "op,phase,count,p50_us,p90_us,p99_us,p999_us,max_us" ] || fail "$w latency header"
  [ "$(head -1 "$d/latency_hist.csv")" = "op,phase,bucket_low_us,bucket_high_us,count" ] || fail "$w hist header"
  [ "$(head -1 "$d/papi.csv")" = "rank,phase,counter,value" ] || fail "$w papi header"
  tl=$(awk -F, 'NR > 1 {s += $4} END {print s}' "$d/timeline.csv")
  la=$(awk -F, '$1 == "all" && $2 == "all" {print $3}' "$d/latency.csv")
  mo=$(sed -n 's/.*"operations_done": \([0-9]*\).*/\1/p' "$d/meta.json")
  ve=$(sed -n 's/.*"verify_errors": \([0-9]*\).*/\1/p' "$d/meta.json")
  [ "$tl" = 8000 ] && [ "$la" = 8000 ] && [ "$mo" = 8000 ] || fail "workload $w: timeline $tl, latency $la, meta $mo operations (want 8000)"
  [ "$ve" = 0 ] || fail "workload $w: $ve values failed their check"
  echo "ok: workload $w, 8000 operations in every table"
done

bad() {  # expected-message args...
  local want=$1; shift
  out=$("$RUN" -n 2 --timeout 60 --no-verdict -- "$DRV" "$@" 2>&1); rc=$?
  grep -q -- "$want" <<<"$out" || fail "message '$want' missing for: $* ($out)"
  [ "$rc" -ne 0 ] || fail "exit 0 for: $*"
}
bad "unknown store setting 'colour'" store.colour=red
bad "records: " workload.records=lots
bad "unknown workload" workload.workload=z
bad "unknown variant 'magic'" store.variant=magic
bad "exceeds store.max_key" workload.key_bytes=100 store.max_key=32
bad "replicas=3 but only 2 ranks" store.replicas=3
printf '[store]\nreplicas = 2\n[workload]\nrecords = 100\nbogus line\n' > "$T/bad.conf"
bad "bad.conf:5" --config "$T/bad.conf"
echo "ok: bad settings refused with their messages"

d=$T/external
# shellcheck disable=SC2086
"$RUN" -n 4 --timeout 90 -- "$DRV" workload.workload=a workload.operations=0 workload.duration_s=4 \
    $COMMON driver.out="$d" > "$T/ext.log" 2>&1 &
run=$!
"$INJ" --pids "$d/pids" --nranks 4 --schedule "target=ranks:2; when=time:1.5" --max-simultaneous 1 \
    --log "$d/kills.csv" --timeout 60 > "$T/inj.log" 2>&1 || { cat "$T/inj.log"; fail "kv_inject failed"; }
wait $run || { tail -5 "$T/ext.log"; fail "run with an external kill did not finish"; }
pid2=$(awk '{print $2}' "$d/pids/rank.2")
grep -q "^0,2,$pid2," "$d/kills.csv" || fail "kill log lacks rank 2 / pid $pid2: $(cat "$d/kills.csv")"
[ "$(tail -n +2 "$d/recovery.csv" | wc -l)" -ge 1 ] || fail "no recovery after the external kill"
echo "ok: external kill of rank 2 (pid $pid2) noticed and recovered"

d=$T/spare
# shellcheck disable=SC2086
"$RUN" -n 5 --timeout 90 -- "$DRV" workload.workload=a workload.operations=0 workload.duration_s=3 \
    $COMMON store.variant=spare store.spares=1 "driver.failures=target=ranks:1; when=time:1" \
    driver.out="$d" > "$T/spare.log" 2>&1 || { tail -5 "$T/spare.log"; fail "spare run with a kill did not finish"; }
rows=$(tail -n +2 "$d/recovery.csv" | wc -l)
bad_rows=$(awk -F, 'NR > 1 && ($5 == "NA" || $5 < 0 || $5 > 3e6)' "$d/recovery.csv")
[ "$rows" -eq 4 ] && [ -z "$bad_rows" ] || fail "spare run: $rows recovery rows (want 4), detection outside the run: $bad_rows"
echo "ok: spare run, every survivor's detection (the spare's too) within the run"

# shellcheck disable=SC2086
out=$("$RUN" -n 4 --timeout 12 -- "$DRV" workload.workload=a workload.operations=0 workload.duration_s=4 \
    $COMMON "driver.failures=signal=STOP; target=ranks:1; when=time:1" driver.out="$T/stop" 2>&1 | tr -d '\000'); rc=$?  # pipefail: kvrun's status
[ "$rc" -eq 3 ] && grep -q HUNG <<<"$out" || fail "SIGSTOP run: exit $rc, $(tail -1 <<<"$out")"
echo "ok: SIGSTOP ends in a reported hang"

# shellcheck disable=SC2086
KVRUN_TAG=kvrun-term-$$ "$RUN" -n 4 --timeout 60 -- "$DRV" workload.workload=a workload.operations=0 \
    workload.duration_s=30 $COMMON driver.out="$T/term" > "$T/term.log" 2>&1 &
run=$!
sleep 3  # the ranks run
kill -TERM "$run"; wait "$run"; rc=$?
sleep 0.5
left=$(grep -l "KVRUN_TAG=kvrun-term-$$" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | tr '\n' ' ')
[ "$rc" -eq 143 ] && [ -z "${left// /}" ] || fail "kvrun after SIGTERM: exit $rc, left: $left"
echo "ok: kvrun stopped by SIGTERM leaves no process of its run"
echo "PASS: driver"
