# Weak error of the Async-MSGD ensemble against the ODE limit over a ladder of step sizes,
# log-log, with +-2 standard errors and the fitted power law C eta^p (a lower bar that
# would reach below 0 is drawn down to a tenth of the value: log axes).
# Usage: gnuplot -e "data='out/converge.csv'; out='out/converge'" docs/figures/converge.gp
# Writes out.png and out.svg. The CSV is the output of `amsgd converge` (columns eta, tau,
# weak_error, weak_error_sem, t_max, weak_error_sde, weak_error_sde_sem, diverged, fit).
if (!exists("data")) data = 'out/converge.csv'
if (!exists("out")) out = 'out/converge'
if (!exists("title")) title = 'Weak error to the ODE limit (bars: +-2 SE; line: fitted C eta^p)'
set datafile separator ','
set key top left
set logscale xy
set format x '10^{%T}'
set format y '10^{%T}'
set xlabel 'eta'
set ylabel 'max_t |E err_{eta}(t) - err_{ODE}(t)|'
set title title
set grid
do for [fmt in 'png svg'] {
    if (fmt eq 'png') { set terminal pngcairo size 900,560 enhanced font 'Sans,11' }
    if (fmt eq 'svg') { set terminal svg size 900,560 enhanced font 'Sans,11' }
    set output out.'.'.fmt
    plot data skip 1 using 1:3:($3-2*$4 > 0 ? $3-2*$4 : $3/10):($3+2*$4) with yerrorbars pt 7 lc rgb '#1f3b73' title 'discrete vs ODE', \
         data skip 1 using 1:9 with lines lw 2 lc rgb '#c44e52' title 'fit C eta^p', \
         data skip 1 using 1:($6 > 0 ? $6 : 1/0):($6-2*$7 > 0 ? $6-2*$7 : $6/10):($6+2*$7) with yerrorbars pt 5 lc rgb '#55a868' title 'discrete vs SDE'
}
