#!/usr/bin/env bash
# test_analysis.sh -- analysis/figures.py on the committed fixture
# tests/fixtures/results-mini (synthetic, see its README.md).
#
# Pass rules: figures.py exits 0 on a temporary copy of the fixture; every
# figure exists as PNG and PDF, each PNG is a PNG (magic bytes) of more than
# 300x200 pixels (IHDR) and 5 KB, each PDF starts with %PDF; the three
# *_gnuplot.png exist and are valid (also with the plain png terminal);
# summary.csv holds the values computed here with awk straight from the
# fixture's CSV files (runs, hung, a median throughput, median recovery
# phases along the critical path, a read p50) and a 95% interval around
# each median; the stacked phases of recovery_phases add up to one rank's
# total (never above the largest); results in the older clock formats
# (kills.csv time_s, run_start_wallclock) still draw; a run's timeline
# (analysis/common.run_timeline) leaves each rank's last bin out; malformed or partial copies (wrong timeline.csv
# header, truncated recovery.csv row, meta.json without a field, and a few
# more) make figures.py exit non-zero with "error: FILE: ..." naming the
# file, and no Python traceback.  Exit 0 = pass; every failure is printed.
# Python: $PYTHON, default the first python3 on PATH with matplotlib and
# numpy (analysis/pyfind.py).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PYTHON:-$(python3 "$ROOT/analysis/pyfind.py")}
FIX=$ROOT/tests/fixtures/results-mini
FIG=$ROOT/analysis/figures.py
T=$(mktemp -d "${TMPDIR:-/tmp}/test_analysis.XXXXXX")
trap 'rm -rf "$T"' EXIT
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

"$PY" -c 'import matplotlib, numpy' 2>/dev/null ||
  { echo "FAIL: $PY has no matplotlib/numpy (make deps installs python3-matplotlib)"; exit 1; }
command -v gnuplot >/dev/null || { echo "FAIL: gnuplot is not installed (make deps)"; exit 1; }

# ---- the figures ------------------------------------------------------------
cp -r "$FIX" "$T/mini"
if ! "$PY" "$FIG" "$T/mini" >"$T/run.log" 2>&1; then
  fail "figures.py on the fixture exited non-zero:"; sed 's/^/    /' "$T/run.log"
fi
OUT=$T/mini/figures

png_ok() {  # file -> "" when fine, else the problem
  local f=$1 magic wh
  [ -f "$f" ] || { echo "missing"; return; }
  magic=$(od -An -tx1 -N8 "$f" | tr -d ' \n')
  [ "$magic" = 89504e470d0a1a0a ] || { echo "not a PNG (magic $magic)"; return; }
  [ "$(od -An -c -j12 -N4 "$f" | tr -d ' \n')" = IHDR ] || { echo "no IHDR chunk"; return; }
  read -r w h < <(od -An -tu1 -j16 -N8 "$f" |
    awk '{print $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}')
  [ "$w" -gt 300 ] && [ "$h" -gt 200 ] || { echo "too small: ${w}x${h}"; return; }
  [ "$(stat -c %s "$f")" -gt 5120 ] || { echo "only $(stat -c %s "$f") bytes"; return; }
}

FIGURES="throughput_timeline recovery_phases recovery_vs_ranks recovery_vs_pairs latency_cdf
         latency_percentiles overhead_replication hang_rate baseline_checkpoint baseline_redis"
for f in $FIGURES; do
  p=$(png_ok "$OUT/$f.png"); [ -z "$p" ] || fail "$f.png: $p"
  [ -f "$OUT/$f.pdf" ] && [ "$(head -c 4 "$OUT/$f.pdf")" = "%PDF" ] || fail "$f.pdf missing or not a PDF"
done
for f in throughput_timeline recovery_phases latency_cdf; do
  p=$(png_ok "$OUT/${f}_gnuplot.png"); [ -z "$p" ] || fail "${f}_gnuplot.png: $p"
done
for f in summary.md summary.csv data/vars.gp data/recovery_phases.csv data/timeline_0.csv; do
  [ -s "$OUT/$f" ] || fail "$f missing or empty"
done
# the fallback terminal of gnuplot.sh
if GNUPLOT_TERM_OVERRIDE=png bash "$ROOT/analysis/gnuplot.sh" "$OUT" >"$T/gp.log" 2>&1; then
  for f in throughput_timeline recovery_phases latency_cdf; do
    p=$(png_ok "$OUT/${f}_gnuplot.png"); [ -z "$p" ] || fail "${f}_gnuplot.png (png terminal): $p"
  done
else
  fail "gnuplot.sh with the png terminal:"; sed 's/^/    /' "$T/gp.log"
fi

# ---- summary.csv against values computed here ---------------------------------
S=$OUT/summary.csv
val() {  # variant column -> the value in summary.csv (the fixture has one row per variant)
  awk -F, -v v="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
    $1 == v { print (k ? $k : "NOCOLUMN"); n++ } END { if (n != 1) print "ROWS=" n }' "$S"
}
check() {  # what got want
  awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d
    exit !(g != "" && g !~ /[A-Za-z=]/ && d <= 0.001 + 1e-9 * (w < 0 ? -w : w)) }' ||
    fail "summary.csv $1: got '$2', computed '$3'"
}
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2];
  else printf "%.6f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
runs_of() { awk -F, -v v="$1" 'NR > 1 && $2 == v { print $1 }' "$FIX/runs.csv"; }
# per run the column of the rank that resumed last (largest detect + total:
# the critical path), median over the runs
phase_median() {
  for r in $(runs_of "$1"); do
    awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == c) k = i; if ($i == "detect_us") d = i
        if ($i == "total_us") t = i }; next }
      { if (n++ == 0 || $d + $t > best) { best = $d + $t; m = $k } } END { print m }' "$FIX/$r/recovery.csv"
  done | median
}
throughput_median() {  # sum of ops over rank and bin / (last t_end - first t_start)
  for r in $(runs_of "$1"); do
    awk -F, 'NR > 1 { s += $4; if (NR == 2 || $2 < a) a = $2; if ($3 > b) b = $3 }
      END { printf "%.6f\n", s / (b - a) }' "$FIX/$r/timeline.csv"
  done | median
}
for v in none recreate-copy spare recreate-free; do
  check "$v runs" "$(val "$v" runs)" "$(runs_of "$v" | wc -l)"
  check "$v hung" "$(val "$v" hung)" \
    "$(awk -F, -v v="$v" 'NR > 1 && $2 == v && $12 == "hung"' "$FIX/runs.csv" | wc -l)"
done
check "recreate-free hung (fixed)" "$(val recreate-free hung)" 1
for v in recreate-copy spare; do
  for ph in detect_us shrink_us rereplicate_us total_us; do
    check "$v $ph" "$(val "$v" "$ph")" "$(phase_median "$v" "$ph")"
  done
  check "$v total_us_n" "$(val "$v" total_us_n)" 2
done
for v in none recreate-copy spare; do
  check "$v throughput_ops_per_s" "$(val "$v" throughput_ops_per_s)" "$(throughput_median "$v")"
done
check "spare read_p50_us" "$(val spare read_p50_us)" "$(for r in $(runs_of spare); do
  awk -F, '$1 == "read" && $2 == "all" { print $4 }' "$FIX/$r/latency.csv"; done | median)"
[ "$(val none total_us)" = NA ] || fail "summary.csv none total_us: '$(val none total_us)', expected NA"
[ "$(val recreate-free throughput_ops_per_s_n)" = 0 ] || fail "recreate-free throughput_n is not 0"
grep -q '^| recreate-copy |.*[0-9] \[[0-9.]*, [0-9.]*\]\( ([0-9]*%)\)\? (n=2)' "$OUT/summary.md" ||
  fail "summary.md has no recreate-copy row with a median, its interval and n=2"
for v in recreate-copy spare; do  # the interval holds the median
  lo=$(val "$v" total_us_ci_low) hi=$(val "$v" total_us_ci_high) m=$(val "$v" total_us)
  awk -v l="$lo" -v h="$hi" -v m="$m" 'BEGIN { exit !(l <= m && m <= h && l < h) }' ||
    fail "$v total_us: interval [$lo, $hi] around $m"
done
# recovery_phases stacks one rank's phases: the stack is a rank's total
# minus nothing named elsewhere, so it equals some survivor's total_us
stack=$(awk -F, 'NR == 2 { printf "%.3f", $2 + $3 + $4 + $5 + $6 + $7 }' "$OUT/data/recovery_phases.csv")
awk -F, -v s="$stack" 'NR > 1 { d = $11 / 1000 - s; if (d < 0) d = -d; if (d < 0.002) f = 1 } END { exit !f }' \
  $(for r in $(runs_of recreate-copy); do echo "$FIX/$r/recovery.csv"; done) ||
  fail "recovery_phases: the recreate-copy stack ($stack ms) is no survivor's total"

# ---- malformed and partial results directories ---------------------------------
R=recreate-copy-allocate-8-r2-ycsb-b-kill-1
bad() {  # name file-named-in-the-message mutation
  local d=$T/bad-$1
  cp -r "$FIX" "$d"
  (cd "$d" && eval "$3")
  "$PY" "$FIG" "$d" --no-gnuplot >"$d.out" 2>"$d.err"; local rc=$?
  if [ $rc -eq 0 ]; then fail "$1: figures.py exited 0"
  elif ! grep -q "^error: .*$2: " "$d.err"; then fail "$1: message does not name $2: $(head -3 "$d.err")"
  elif grep -q Traceback "$d.err"; then fail "$1: a traceback instead of a message"
  fi
}
bad timeline-header "$R/timeline.csv" \
  "sed -i '1s/read_ops/reads/' $R/timeline.csv"
bad recovery-truncated "$R/recovery.csv" \
  "sed -i '4s/,[^,]*,[^,]*,[^,]*\$//' $R/recovery.csv"
bad recovery-cut-short "$R/recovery.csv" \
  "head -c -7 $R/recovery.csv > x && mv x $R/recovery.csv"
bad meta-field "$R/meta.json" \
  "$PY -c 'import json; m = json.load(open(\"$R/meta.json\")); del m[\"variant\"]; json.dump(m, open(\"$R/meta.json\", \"w\"))'"
bad meta-start "$R/meta.json" \
  "$PY -c 'import json; m = json.load(open(\"$R/meta.json\")); del m[\"run_start_wall_ns\"]; json.dump(m, open(\"$R/meta.json\", \"w\"))'"
bad meta-json "$R/meta.json" "sed -i '1s/{/{,/' $R/meta.json"
bad na-empty "$R/latency.csv" "sed -i '2s/,[0-9.]*\$/,/' $R/latency.csv"
bad no-timeline "$R/timeline.csv" "rm $R/timeline.csv"
bad no-runs-csv "runs.csv" "rm runs.csv"

# ---- a run's timeline leaves out each rank's last bin (cut short at the run's end) ----
tl=$("$PY" - "$ROOT/analysis" "$FIX/$R" <<'PY' 2>&1
import csv, sys
sys.path.insert(0, sys.argv[1])
import common, results
d = sys.argv[2]
tl = common.run_timeline(results.Run(d, results.read_meta(d + "/meta.json")))
last, starts = {}, set()
for r in csv.DictReader(open(d + "/timeline.csv")):
    last[r["rank"]] = max(last.get(r["rank"], 0.0), float(r["t_start_s"]))
    starts.add(round(float(r["t_start_s"]), 6))
print("ok" if max(tl) < min(last.values()) and len(tl) == len(starts) - 1 else
      f"bins {sorted(tl)[-3:]}, last bins {last}")
PY
)
[ "$tl" = ok ] || fail "run_timeline: $tl"

# ---- tolerated: what the campaign runner really leaves ----------------------------
good() {  # name mutation
  local d=$T/good-$1
  cp -r "$FIX" "$d"
  (cd "$d" && eval "$2")
  "$PY" "$FIG" "$d" --summary-only >"$d.out" 2>&1 || fail "$1: figures.py failed: $(tail -3 "$d.out")"
  local n; n=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "runs") k = i; next }
    { s += $k } END { print s }' "$d/figures/summary.csv")
  [ "$n" = 6 ] || fail "$1: summary.csv counts $n runs, expected 6"
}
H=recreate-free-allocate-8-r2-ycsb-b-kill-1
# the stub meta.json experiments/campaign/campaign.py writes for a run that hung
good stub-meta "$PY -c 'import json; m = json.load(open(\"$H/meta.json\"))
keep = \"campaign run_id status variant backend ranks nodes replicas failures job_id\".split()
json.dump({k: m[k] for k in keep}, open(\"$H/meta.json\", \"w\"))'"
# a run not run yet: listed as pending, its directory without meta.json
good pending "mkdir -p later/ranks && touch later/launcher.log &&
  echo 'later,spare,allocate,8,1,2,ycsb-b,,3,NA,NA,pending,NA' >> runs.csv"
# results written before the clock was integer ns, and runs.csv without seeds
good legacy-clock "$PY -c 'import json; m = json.load(open(\"$R/meta.json\"))
m[\"run_start_wallclock\"] = m.pop(\"run_start_wall_ns\") / 1e9
json.dump(m, open(\"$R/meta.json\", \"w\"))' &&
  awk -F, -v OFS=, 'NR == 1 { \$6 = \"time_s\" } NR > 1 { \$6 = sprintf(\"%.6f\", \$6 / 1e9) } 1' $R/kills.csv > k &&
  mv k $R/kills.csv && cut -d, -f10,11 --complement runs.csv > r && mv r runs.csv"

if [ "$FAILS" -eq 0 ]; then
  echo "test_analysis: all checks passed ($(ls "$OUT" | wc -l) files in the output)"
  exit 0
fi
echo "test_analysis: $FAILS check(s) failed"
exit 1
