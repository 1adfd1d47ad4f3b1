# tradeoff.gp -- Liu et al.'s bars: test accuracy after a fixed budget of asynchronous momentum
# SGD against the momentum mu, grouped by the number of workers P (staleness from the
# parameter-server simulator), error bars +-2 standard errors over seeds, the best momentum of
# each P marked with a star above its bar (and its paired-bootstrap 95% interval written under
# the group). The accuracy axis does not start at 0 (its range is fitted to the bars).
# Data: the CSV of `amsgd tradeoff` (columns workers,mu,lr,accuracy,accuracy_sem,seeds,diverged,
# mean_staleness,max_staleness,p_best,best_mu,best_mu_lo,best_mu_hi), rows grouped by P with
# the same momenta in each group, e.g.
#   amsgd tradeoff --preset liu2018-dnn -o tradeoff.csv
# Render: gnuplot -c tradeoff.gp tradeoff.csv tradeoff.png "TITLE"
data = ARG1 ne "" ? ARG1 : "tradeoff.csv"
out = ARG2 ne "" ? ARG2 : "tradeoff.png"
title = ARG3 ne "" ? ARG3 : "test accuracy after a fixed budget per momentum and worker count"
set terminal pngcairo size 1200,650 font ",10"
set output out
set datafile separator ","
# the momenta of the first group, and the number of groups
mus = system(sprintf("awk -F, 'NR > 1 && !seen[$2]++ { printf \"%%s \", $2 }' %s", data))
nmu = words(mus)
ngroup = int(system(sprintf("awk -F, 'NR > 1 && !seen[$1]++ { n++ } END { print n }' %s", data)))
gap = 1.5
xpos(row) = row + floor(row / nmu) * gap
stats data using ($4 - 2 * ($5 == $5 ? $5 : 0)) every ::1 nooutput
lo = STATS_min
stats data using ($4 + 2 * ($5 == $5 ? $5 : 0)) every ::1 nooutput
hi = STATS_max
set yrange [lo - 0.03 * (hi - lo) - 0.005 : hi + 0.12 * (hi - lo) + 0.005]
set xrange [-1 : xpos(ngroup * nmu - 1) + 1]
set ylabel "test accuracy after the budget (fraction correct; axis not from 0)"
set xlabel "workers P (mean staleness tau of an update, in updates; best mu with its 95% bootstrap interval)" offset 0, -0.5
set bmargin 6
set grid ytics lc rgb "#e0e0e0"
set key outside right top title "momentum mu" box
set style fill solid 0.85 border lc rgb "#404040"
set boxwidth 0.9
set linetype 1 lc rgb "#0072B2"
set linetype 2 lc rgb "#56B4E9"
set linetype 3 lc rgb "#009E73"
set linetype 4 lc rgb "#E69F00"
set linetype 5 lc rgb "#D55E00"
set linetype 6 lc rgb "#CC79A7"
set linetype 7 lc rgb "#000000"
set linetype 8 lc rgb "#F0E442"
set title title font ",11"
mi(row) = int(row) % nmu
# group labels under the middle bar of each group
grouplabel(row) = mi(row) == int(nmu / 2) ? sprintf("P = %d (tau = %.2f)\nbest mu %g [%g, %g]", column(1), column(8), column(11), column(12), column(13)) : ""
set xtics scale 0 nomirror
plot data every ::1 using (xpos($0)):4:(mi($0) + 1):xtic(grouplabel($0)) with boxes lc variable notitle, \
     for [j = 1:nmu] NaN with boxes lc j title word(mus, j), \
     data every ::1 using (xpos($0)):($4 - 2 * $5):(0):(4 * $5) with vectors nohead lc rgb "#000000" lw 1.2 title "+-2 SE over seeds", \
     for [e = -1:1:2] data every ::1 using (xpos($0) - 0.15):($4 + e * 2 * $5):(0.3):(0) with vectors nohead lc rgb "#000000" lw 1.2 notitle, \
     data every ::1 using (xpos($0)):(abs($2 - $11) < 1e-12 ? $4 + 2 * $5 + 0.04 * (hi - lo) : NaN) with points pt 3 ps 2.2 lc rgb "#000000" title "best mu of P"
