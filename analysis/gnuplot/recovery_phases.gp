# recovery_phases.gp -- recovery time split into phases: one stacked bar per
# configuration (the phases of the survivor that resumed last, in the
# median run: one rank's recovery), the median total over runs with its 95%
# distribution-free interval; detection in a second panel.  Reads
# data/recovery_phases.csv; writes recovery_phases_gnuplot.png.
load gpdir."/common.gp"
n = words(phase_labels)
eval setterm(n > 4 ? 300 + 180 * n : 1000, 560)
set output outdir."/recovery_phases_gnuplot.png"
f = datadir."/recovery_phases.csv"
ttl = sprintf("%s: recovery time by phase, critical path (%d runs)", campaign, phase_total_runs)
set xlabel "variant"
if (n == 0 || phase_total_runs == 0) {
  set title ttl
  set ylabel "recovery time (ms)"
  eval nodata("no data: no finished run with recovery rows")
  exit
}
ymax = phase_ymax_ms > 0 ? phase_ymax_ms * 1.6 : 1
set multiplot layout 1,2 title ttl
set tmargin 4
set xtics () rotate by 20 right
do for [i=1:n] { set xtics add (word(phase_labels, i) i - 1) }
set xrange [-0.6:n - 0.4]
set yrange [0:ymax]
set boxwidth 0.6
set style fill solid 0.9 border -1
set key top left box opaque
set size 0.62, 1
set origin 0, 0
set title "stack: the survivor that resumed last, in the median run; marker: median total, 95% CI"
set ylabel "recovery time (ms), detection excluded"
plot f using 1:($2+$3+$4+$5+$6+$7) with boxes lc rgb "#bcbd22" title "other", \
     f using 1:($2+$3+$4+$5+$6) with boxes lc rgb "#9467bd" title "rereplicate", \
     f using 1:($2+$3+$4+$5) with boxes lc rgb "#d62728" title "windows", \
     f using 1:($2+$3+$4) with boxes lc rgb "#2ca02c" title "agree", \
     f using 1:($2+$3) with boxes lc rgb "#ff7f0e" title "shrink", \
     f using 1:2 with boxes lc rgb "#1f77b4" title "revoke", \
     f using 1:8:9:10 with yerrorbars pt 2 lc rgb "black" title "total: median, 95% CI", \
     f using 1:($14 > 0 ? $10 : NaN):(sprintf("n=%d", $14)) with labels offset 0,0.8 notitle, \
     f using 1:(0):($14 > 0 ? "" : "no data") with labels rotate left offset 0,0.5 tc rgb "#b00000" notitle
set size 0.38, 1
set origin 0.62, 0
set title "detection"
set ylabel "detection time (ms)"
set yrange [0:detect_ymax_ms > 0 ? detect_ymax_ms * 1.4 : 1]
plot f using 1:11 with boxes lc rgb "#9e9e9e" title "detect: median", \
     f using 1:11:12:13 with yerrorbars pt 0 lc rgb "black" title "95% CI", \
     f using 1:(0):(valid(11) ? "" : "no data") with labels rotate left offset 0,0.5 tc rgb "#b00000" notitle
unset multiplot
