# throughput_timeline.gp -- throughput over time, one panel per configuration
# with data: median over repetitions with the 95% distribution-free interval per
# bin as a band (one run: that run), kills (dashed lines) and recovery
# spans (shaded).  Reads data/timeline_N.csv and
# data/timeline_N_kills.csv; writes throughput_timeline_gnuplot.png.
load gpdir."/common.gp"
n = words(timeline_labels)
eval setterm(900, n > 0 ? 120 + 260 * n : 450)
set output outdir."/throughput_timeline_gnuplot.png"
ttl = sprintf("%s: throughput over time (median over repetitions where n > 1) (%d runs)", \
              campaign, timeline_total_runs)
set xlabel "time since run start (s)"
set ylabel "throughput (ops/s)"
set key bottom left box opaque
if (n == 0) {
  set title ttl
  eval nodata("no data: no finished run with a timeline")
  exit
}
set multiplot layout n,1 title ttl
do for [i=1:n] {
  f = sprintf("%s/timeline_%d.csv", datadir, i - 1)
  k = sprintf("%s/timeline_%d_kills.csv", datadir, i - 1)
  set autoscale y
  stats f using 4 nooutput
  ymax = STATS_max * 1.1
  set yrange [0:ymax]
  set title word(timeline_labels, i)
  one = word(timeline_runs, i) + 0 == 1
  cmd = "plot f using 1:3:4 with filledcurves fs transparent solid 0.25 lc rgb '#1f77b4' title '95% CI of the median', " . \
        "f using 1:2 with lines lw 1.5 lc rgb '#1f77b4' title (one ? 'one run' : sprintf('median of %s runs', word(timeline_runs, i)))"
  if (word(timeline_spans, i) + 0 > 0) {
    cmd = cmd . ", k using (($2+$3)/2):(ymax/2):2:3:(0):(ymax) with boxxyerror fs transparent solid 0.3 noborder lc rgb '#ff9900' title 'recovery span'"
  }
  if (word(timeline_kills, i) + 0 > 0) {
    cmd = cmd . ", k using 1:(0):(0):(ymax) with vectors nohead dt 2 lw 1.2 lc rgb '#d00000' title 'kill'"
  }
  eval cmd
}
unset multiplot
