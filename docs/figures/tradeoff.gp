# tradeoff.gp -- Liu et al.'s claim on a network: test accuracy after a fixed budget of
# asynchronous momentum SGD against the momentum mu, one curve per number of workers P
# (staleness from the parameter-server simulator); points with error bars +-2 standard errors
# over seeds, the best momentum of each P circled, its paired-bootstrap 95% interval and the
# mean staleness in the key. The claim "the best momentum falls as P grows" reads as the
# circles moving left from curve to curve. The accuracy axis does not start at 0 (points,
# not bars, so no length is read from it).
# Data: the CSV of `amsgd tradeoff` (columns workers,mu,lr,accuracy,accuracy_sem,seeds,diverged,
# mean_staleness,max_staleness,p_best,best_mu,best_mu_lo,best_mu_hi), e.g.
#   amsgd tradeoff --preset liu2018-dnn -o tradeoff.csv
# Render: gnuplot -c tradeoff.gp tradeoff.csv tradeoff.png "TITLE" (an OUT ending in .svg
# writes SVG)
data = ARG1 ne "" ? ARG1 : "tradeoff.csv"
out = ARG2 ne "" ? ARG2 : "tradeoff.png"
title = ARG3 ne "" ? ARG3 : "test accuracy after a fixed budget per momentum and worker count"
if (out[strlen(out) - 3:] eq ".svg") {
    set terminal svg size 1250,650 font "sans,12" dynamic
} else {
    set terminal pngcairo size 1250,650 font ",10"
}
set output out
set datafile separator ","
# the worker counts, in the order of the file
ps = system(sprintf("awk -F, 'NR > 1 && !seen[$1]++ { printf \"%%s \", $1 }' %s", data))
np = words(ps)
# per P: mean staleness and the best mu with its interval (the same on every row of a P)
info(p, c) = system(sprintf("awk -F, 'NR > 1 && $1 == %s { print $%d; exit }' %s", p, c, data))
stats data using ($4 - 2 * ($5 == $5 ? $5 : 0)) every ::1 nooutput
lo = STATS_min
stats data using ($4 + 2 * ($5 == $5 ? $5 : 0)) every ::1 nooutput
hi = STATS_max
stats data using 2 every ::1 nooutput
mlo = STATS_min
mhi = STATS_max
set yrange [lo - 0.05 * (hi - lo) : hi + 0.05 * (hi - lo)]
set xrange [mlo - 0.06 : mhi + 0.06]
set xlabel "momentum mu"
set ylabel "test accuracy after the budget (fraction correct; axis not from 0)"
set grid xtics ytics lc rgb "#e0e0e0"
set key outside right top box title "workers P (mean staleness tau, in updates):\nbest mu [95% interval]; error bars +-2 SE\nover seeds" left
set linetype 1 lc rgb "#0072B2" lw 1.5 pt 7 ps 1.1
set linetype 2 lc rgb "#009E73" lw 1.5 pt 5 ps 1.1
set linetype 3 lc rgb "#E69F00" lw 1.5 pt 9 ps 1.3
set linetype 4 lc rgb "#D55E00" lw 1.5 pt 11 ps 1.3
set linetype 5 lc rgb "#CC79A7" lw 1.5 pt 13 ps 1.3
set linetype 6 lc rgb "#56B4E9" lw 1.5 pt 15 ps 1.3
set linetype 7 lc rgb "#000000" lw 1.5 pt 4 ps 1.1
set linetype 8 lc rgb "#F0E442" lw 1.5 pt 6 ps 1.1
set title title font ",10"
# the curves side by side: a small shift per P so that the error bars do not overlap
shift(i) = 0.012 * (i - (np + 1) / 2.0)
label(i) = sprintf("P = %s (tau %.2f): %s [%s, %s]", word(ps, i), info(word(ps, i), 8) + 0, \
                   info(word(ps, i), 11), info(word(ps, i), 12), info(word(ps, i), 13))
plot for [i = 1:np] data every ::1 using ($1 == word(ps, i) + 0 ? $2 + shift(i) : NaN):4:(2 * $5) \
         with yerrorlines lt i title label(i), \
     for [i = 1:np] data every ::1 using ($1 == word(ps, i) + 0 && abs($2 - $11) < 1e-12 ? $2 + shift(i) : NaN):4 \
         with points pt 6 ps 3.2 lw 2 lc rgb "#000000" notitle, \
     NaN with points pt 6 ps 2.2 lw 2 lc rgb "#000000" title "best mu of that P"
