#!/usr/bin/env bash
# gnuplot.sh OUT_DIR -- the gnuplot versions of the key figures, from the
# CSV files analysis/figures.py exported into OUT_DIR/data (with
# OUT_DIR/data/vars.gp): throughput_timeline_gnuplot.png,
# recovery_phases_gnuplot.png and latency_cdf_gnuplot.png in OUT_DIR.
# Uses the pngcairo terminal when gnuplot has it, else png.  Exit 0 when
# every script ran, 1 otherwise (each failure is named).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?usage: analysis/gnuplot.sh OUT_DIR}
[ -f "$OUT/data/vars.gp" ] || { echo "error: $OUT/data/vars.gp: missing (run analysis/figures.py first)" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "error: gnuplot is not installed" >&2; exit 1; }
if [ -n "${GNUPLOT_TERM_OVERRIDE:-}" ]; then term=$GNUPLOT_TERM_OVERRIDE   # for tests: png
elif gnuplot -e "set terminal" 2>&1 | grep -qw pngcairo; then term=pngcairo; else term=png; fi
rc=0
for s in throughput_timeline recovery_phases latency_cdf; do
  rm -f "$OUT/${s}_gnuplot.png"
  log=$(gnuplot -e "gpdir='$HERE/gnuplot'; datadir='$OUT/data'; outdir='$OUT'; termname='$term'" \
        "$HERE/gnuplot/$s.gp" 2>&1)
  st=$?
  # "no valid points" and friends are warnings about an empty series
  grep -v -e '^$' -e 'warning:' <<<"$log" | grep -q . && echo "$log" >&2
  if [ $st -ne 0 ] || [ ! -s "$OUT/${s}_gnuplot.png" ]; then
    echo "error: analysis/gnuplot/$s.gp failed (exit $st)" >&2; rc=1
  else
    echo "wrote $OUT/${s}_gnuplot.png ($term)"
  fi
done
exit $rc
