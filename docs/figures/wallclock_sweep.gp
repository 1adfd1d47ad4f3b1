# wallclock_sweep.gp -- the least-squares wallclock study over P = 2, 4, 8, 16 learners and
# three runtime laws (amsgd wallclock --sweep, docs/wallclock.md): per variant (K = P/2 for
# the K-variants) the measured time per update and error floor, mean over 5 seeds with
# +- 2 standard-error bars (each seed 100 replicas of 2000 updates), next to the closed forms:
# Dutta et al.'s expected time per update (lines; none for K-async under non-exponential
# runtimes), the exact fresh-gradient floor of the synchronous variants (solid lines) and the
# async / K-async bound eta L sigma^2 tr(H) / (2 c K (1 - gamma + p0/2)) with the measured p0
# and gamma (dashed; missing where 1 - gamma + p0/2 <= 0). Points of one P are spread
# sideways by variant so that the bars stay apart. The lines take the rows of one law and
# variant with "every 6" (the CSV lists law, then P, then the six variants in this order).
# K-sync and K-batch-sync share their exact floor (their lines coincide), as do K-async and
# K-batch-async nearly their bounds.
# Data: wallclock_sweep.csv beside this script, made by
#   amsgd wallclock --sweep -o wallclock_sweep.csv
# Render: cd docs/figures && gnuplot wallclock_sweep.gp   (writes wallclock_sweep.png and
#   wallclock_sweep.svg)
set datafile separator ","
set grid xtics ytics lc rgb "#e6e6e6"
set linetype 1 lc rgb "#000000"
set linetype 2 lc rgb "#E69F00"
set linetype 3 lc rgb "#CC79A7"
set linetype 4 lc rgb "#D55E00"
set linetype 5 lc rgb "#009E73"
set linetype 6 lc rgb "#0072B2"
set logscale xy
set xrange [1.6:20]
set xtics ("2" 2, "4" 4, "8" 8, "16" 16)
set xlabel "learners P"
names = "sync k-sync k-batch-sync async k-async k-batch-async"
labels = "sync k-sync:P/2 k-batch-sync:P/2 async k-async:P/2 k-batch-async:P/2"
laws = "exp:1 shiftexp:1:1 pareto:2.5:1"
sel(law, name, col) = (strcol(1) eq law && strcol(3) eq name ? column(col) : NaN)
shift(j) = column(2) * 1.035 ** (j - 3.5)
do for [fmt in "png svg"] {
    if (fmt eq "png") { set terminal pngcairo size 1500,900 font ",10" }
    if (fmt eq "svg") { set terminal svg size 1500,900 fontscale 1.25 font ",10" background "white" }
    set output "wallclock_sweep." . fmt
    # the SVG terminal estimates text widths: a little more room in its keys
    kw = (fmt eq "svg" ? 3 : 0)
    set multiplot layout 2,3 title "least squares (d = 4, H eigenvalues 2 .. 0.5, sigma = 0.5, eta = 0.02): measured (points, +-2 SE over 5 seeds, mostly smaller than the points) against the closed forms (lines; dashed: async bound)" font ",11"
    set key top left font ",8" box opaque spacing 1.0 width kw
    do for [li = 1:3] {
        law = word(laws, li)
        set title sprintf("time per update, %s runtimes", law)
        set ylabel "wall-clock time per update (units of the runtime)"
        set yrange [0.03:60]
        set format y
        plot for [j = 1:6] "wallclock_sweep.csv" using (shift(j)):(sel(law, word(names, j), 7)):(2 * sel(law, word(names, j), 8)) \
                with yerrorbars pt 7 ps 0.8 lc j title word(labels, j), \
             for [j = 1:6] "wallclock_sweep.csv" skip 1 every 6::(li - 1) * 24 + j - 1::li * 24 - 1 using (shift(j)):(sel(law, word(names, j), 9)) \
                with lines lw 1.2 lc j notitle, \
             NaN with lines lw 1.2 lc rgb "#606060" title "lines: Dutta et al.'s expected time"
    }
    set key bottom left font ",8" box opaque spacing 1.0 maxrows 8 width kw
    do for [li = 1:3] {
        law = word(laws, li)
        set title sprintf("error floor F - F*, %s runtimes", law)
        set ylabel "error floor F(w) - F*"
        set yrange [1e-5:0.3]
        set format y "%g"
        plot for [j = 1:6] "wallclock_sweep.csv" using (shift(j)):(sel(law, word(names, j), 10)):(2 * sel(law, word(names, j), 11)) \
                with yerrorbars pt 7 ps 0.8 lc j title word(labels, j), \
             for [j = 1:3] "wallclock_sweep.csv" skip 1 every 6::(li - 1) * 24 + j - 1::li * 24 - 1 using (shift(j)):(sel(law, word(names, j), 12)) \
                with lines lw 1.2 lc j notitle, \
             for [j = 4:6] "wallclock_sweep.csv" skip 1 every 6::(li - 1) * 24 + j - 1::li * 24 - 1 using (shift(j)):(sel(law, word(names, j), 14)) \
                with lines lw 1.2 dt 2 lc j notitle, \
             NaN with lines lw 1.2 lc rgb "#606060" title "solid: exact fresh-gradient floor", \
             NaN with lines lw 1.2 dt 2 lc rgb "#606060" title "dashed: async bound (measured p0, gamma)"
    }
    unset multiplot
}
