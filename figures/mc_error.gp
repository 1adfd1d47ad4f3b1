# Mean error of the Monte Carlo ensemble with a band of +-2 standard errors.
# Usage: gnuplot -e "data='out/mc.csv'; out='out/mc_error'" figures/mc_error.gp
# Writes out.png and out.svg. The CSV is the output of `amsgd mc` (columns t, step,
# err_mean, err_sem, ...).
if (!exists("data")) data = 'out/mc.csv'
if (!exists("out")) out = 'out/mc_error'
if (!exists("title")) title = 'Async-MSGD: mean error 1 - (v^1.v)^2/|v|^2 (band: +-2 SE)'
set datafile separator ','
set key top right
set logscale y
set format y '10^{%T}'
set xlabel 't = k eta'
set ylabel 'mean error'
set title title
set grid
set style fill transparent solid 0.3 noborder
do for [fmt in 'png svg'] {
    if (fmt eq 'png') { set terminal pngcairo size 900,560 enhanced font 'Sans,11' }
    if (fmt eq 'svg') { set terminal svg size 900,560 enhanced font 'Sans,11' }
    set output out.'.'.fmt
    plot data skip 1 using 1:(($3-2*$4) > 1e-300 ? $3-2*$4 : 1e-300):($3+2*$4) with filledcurves lc rgb '#4c72b0' title '+-2 SE', \
         data skip 1 using 1:3 with lines lw 2 lc rgb '#1f3b73' title 'mean over replicas'
}
