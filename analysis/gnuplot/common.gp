# common.gp -- loaded first by every figure script of analysis/gnuplot.sh.
# Needs (from gnuplot -e): gpdir (this directory), datadir, outdir and
# termname (pngcairo or png).
# Loads datadir/vars.gp (written by analysis/figures.py) and defines
# setterm(w, h): the terminal at w x h pixels.
load datadir."/vars.gp"
set datafile separator comma
set datafile missing "NaN"
set termoption noenhanced
setterm(w, h) = (termname eq "pngcairo") ? \
  sprintf("set terminal pngcairo size %d,%d font 'sans,9' noenhanced", w, h) : \
  sprintf("set terminal png size %d,%d noenhanced", w, h)
# nodata(msg): an empty plot with msg in the middle and a "no data" key.
nodata(msg) = sprintf("set label 99 '%s' at graph 0.5,0.5 center textcolor rgb '#b00000'; " . \
  "set xrange [0:1]; set yrange [0:1]; plot NaN title 'no data'; unset label 99", msg)
