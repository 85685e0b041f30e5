# latency_cdf.gp -- latency CDFs before and after the failure, one line per
# configuration (bucket counts pooled over runs).  Reads
# data/latency_cdf_PHASE_N.csv; writes latency_cdf_gnuplot.png.
load gpdir."/common.gp"
eval setterm(1000, 520)
set output outdir."/latency_cdf_gnuplot.png"
set multiplot layout 1,2 title sprintf("%s: latency CDF, all operations (%d runs)", campaign, cdf_total_runs)
set ylabel "fraction of operations (cumulative)"
set xlabel "latency (us, log scale)"
set key bottom right box opaque
set grid
do for [p in "before_failure after_failure"] {
  labels = (p eq "before_failure") ? cdf_before_failure_labels : cdf_after_failure_labels
  n = words(labels)
  set title (p eq "before_failure") ? "before the failure" : "after the failure"
  if (n == 0) {
    unset logscale x
    eval nodata("no data")
  } else {
    set logscale x
    set xrange [*:*]
    set yrange [0:1.02]
    plot for [i=1:n] sprintf("%s/latency_cdf_%s_%d.csv", datadir, p, i - 1) using 1:2 \
         with steps lw 1.5 title word(labels, i)
  }
}
unset multiplot
