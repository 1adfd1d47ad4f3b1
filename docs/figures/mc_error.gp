# Mean error of the Monte Carlo ensemble with a band of +-2 standard errors. Upper panel:
# the whole path, log y. Lower panel: the plateau (t >= tzoom, default the second half of
# the run) on a linear y, where the band is wide enough to see, with the stationary
# prediction of the OU limit when `pred` is given.
# Usage: gnuplot -e "data='out/mc.csv'; out='out/mc_error'; title='...'; pred=0.01733" figures/mc_error.gp
# Writes out.png and out.svg. The CSV is the output of `amsgd mc` (columns t, step,
# err_mean, err_sem, ...). pred (optional) is the stationary error printed by `amsgd theory`
# with the same --mu and --eta: the eta -> 0 limit without delay.
if (!exists("data")) data = 'out/mc.csv'
if (!exists("out")) out = 'out/mc_error'
if (!exists("title")) title = 'Async-MSGD: mean error over the replicas (band: +-2 SE)'
set datafile separator ','
set style fill transparent solid 0.35 noborder
stats data skip 1 using 1 nooutput
tmax = STATS_max
if (!exists("tzoom")) tzoom = tmax / 2
ylab = 'mean error 1 - (v^1.v)^2/|v|^2'
do for [fmt in 'png svg'] {
    if (fmt eq 'png') { set terminal pngcairo size 900,820 enhanced font 'Sans,11' }
    if (fmt eq 'svg') { set terminal svg size 900,820 fontscale 1.25 enhanced font 'Sans,11' background 'white' }
    set output out.'.'.fmt
    set multiplot layout 2,1 title title
    set lmargin 12
    set key top right
    set grid
    set xlabel 't = k eta'
    set ylabel ylab
    set logscale y
    set format y '10^{%T}'
    set xrange [0:tmax]
    if (exists("pred")) {
        plot data skip 1 using 1:(($3-2*$4) > 1e-300 ? $3-2*$4 : 1e-300):($3+2*$4) with filledcurves lc rgb '#4c72b0' title '+-2 SE', \
             data skip 1 using 1:3 with lines lw 2 lc rgb '#1f3b73' title 'mean over replicas', \
             pred with lines lw 1.5 dt 2 lc rgb '#c44e52' title sprintf('stationary prediction %.4g (eta -> 0, no delay)', pred)
    } else {
        plot data skip 1 using 1:(($3-2*$4) > 1e-300 ? $3-2*$4 : 1e-300):($3+2*$4) with filledcurves lc rgb '#4c72b0' title '+-2 SE', \
             data skip 1 using 1:3 with lines lw 2 lc rgb '#1f3b73' title 'mean over replicas'
    }
    unset logscale y
    set format y '%g'
    set xrange [tzoom:tmax]
    set ylabel ylab.' (plateau)'
    if (exists("pred")) {
        plot data skip 1 using 1:($1 >= tzoom ? $3-2*$4 : 1/0):($3+2*$4) with filledcurves lc rgb '#4c72b0' title '+-2 SE', \
             data skip 1 using 1:($1 >= tzoom ? $3 : 1/0) with lines lw 2 lc rgb '#1f3b73' title 'mean over replicas', \
             pred with lines lw 1.5 dt 2 lc rgb '#c44e52' title sprintf('stationary prediction %.4g (eta -> 0, no delay)', pred)
    } else {
        plot data skip 1 using 1:($1 >= tzoom ? $3-2*$4 : 1/0):($3+2*$4) with filledcurves lc rgb '#4c72b0' title '+-2 SE', \
             data skip 1 using 1:($1 >= tzoom ? $3 : 1/0) with lines lw 2 lc rgb '#1f3b73' title 'mean over replicas'
    }
    unset multiplot
}
