# wallclock.gp -- error against wall-clock time for the parameter-server variants (P = 8
# learners, exp:1 runtimes, K = 4), on strongly convex streaming least squares (F - F*) and
# on streaming PCA with Async-MSGD (1 - (v1.v)^2/|v|^2). Shaded bands: +- 2 standard errors.
# With exponential (memoryless) runtimes k-sync:4 and k-async:4 give the same curve, and so do
# k-batch-sync:4 and k-batch-async:4: the sync twins are drawn dashed with markers on top of
# the async ones, so both stay visible. Points where every replica diverged are left out.
# Data: the CSV files beside this script, made by
#   amsgd wallclock --objective lsq --grid 201 -o wallclock_lsq.csv
#   amsgd wallclock --objective pca --eta 0.005 --updates 3000 --grid 101 -o wallclock_pca.csv
# Render: cd docs/figures && gnuplot wallclock.gp   (writes wallclock.png and wallclock.svg)
set datafile separator ","
set key bottom left font ",9" box opaque spacing 1.05
set xlabel "wall-clock time (units of the mean learner runtime E[X] = 1/RATE)"
set grid xtics ytics lc rgb "#e6e6e6"
# distinct colours; each sync twin shares its async twin's colour family but not its dashes
set linetype 1 lc rgb "#000000"
set linetype 2 lc rgb "#E69F00"
set linetype 3 lc rgb "#CC79A7"
set linetype 4 lc rgb "#D55E00"
set linetype 5 lc rgb "#009E73"
set linetype 6 lc rgb "#0072B2"
set logscale xy
set format y "10^{%T}"
do for [fmt in "png svg"] {
    if (fmt eq "png") { set terminal pngcairo size 1200,560 font ",10" }
    if (fmt eq "svg") { set terminal svg size 1200,560 fontscale 1.25 font ",10" background "white" }
    set output "wallclock." . fmt
    set multiplot layout 1,2 title "P = 8 learners with exp:1 runtimes, K = 4, 200 replicas (bands: +-2 SE); k-sync:4 = k-async:4 and k-batch-sync:4 = k-batch-async:4 here" font ",11"
    sel(name, col) = (strcol(1) eq name && column(3) > 0 && column(7) > 0 ? column(col) : NaN)
    vars = "sync k-sync:4 k-batch-sync:4 async k-async:4 k-batch-async:4"
    # sync, async and the async twins solid (the twins thick); k-sync:4 and k-batch-sync:4 dashed
    # with markers on top
    set title "least squares: d = 4, H eigenvalues 2 .. 0.5, sigma = 0.5, eta = 0.02"
    set ylabel "F(w) - F*"
    set xrange [1:6000]
    set yrange [1e-5:10]
    plot for [j = 1:6] "wallclock_lsq.csv" using (sel(word(vars, j), 3)):(sel(word(vars, j), 5) - 2 * sel(word(vars, j), 6)):(sel(word(vars, j), 5) + 2 * sel(word(vars, j), 6)) \
            with filledcurves fs transparent solid 0.2 lc j notitle, \
         for [js in "1 4 5 6"] "wallclock_lsq.csv" using (sel(word(vars, js + 0), 3)):(sel(word(vars, js + 0), 5)) \
            with lines lw (js + 0 >= 5 ? 4 : 1.8) lc (js + 0) title word(vars, js + 0), \
         for [js in "2 3"] "wallclock_lsq.csv" using (sel(word(vars, js + 0), 3)):(sel(word(vars, js + 0), 5)) \
            with linespoints lw 1.5 dt 2 pt (js + 0 == 2 ? 6 : 4) pi -12 ps 1 lc (js + 0) \
            title sprintf("%s (dashed: same as %s)", word(vars, js + 0), word(vars, js + 3))
    set title "streaming PCA (Async-MSGD), spectrum 4,3,2,1, eta = 0.005"
    set ylabel "1 - (v_1^T v)^2 / |v|^2"
    set xrange [1:10000]
    set yrange [1e-4:1]
    plot for [j = 1:6] "wallclock_pca.csv" using (sel(word(vars, j), 3)):(sel(word(vars, j), 5) - 2 * sel(word(vars, j), 6)):(sel(word(vars, j), 5) + 2 * sel(word(vars, j), 6)) \
            with filledcurves fs transparent solid 0.2 lc j notitle, \
         for [js in "1 4 5 6"] "wallclock_pca.csv" using (sel(word(vars, js + 0), 3)):(sel(word(vars, js + 0), 5)) \
            with lines lw (js + 0 >= 5 ? 4 : 1.8) lc (js + 0) title word(vars, js + 0), \
         for [js in "2 3"] "wallclock_pca.csv" using (sel(word(vars, js + 0), 3)):(sel(word(vars, js + 0), 5)) \
            with linespoints lw 1.5 dt 2 pt (js + 0 == 2 ? 6 : 4) pi -12 ps 1 lc (js + 0) \
            title sprintf("%s (dashed: same as %s)", word(vars, js + 0), word(vars, js + 3))
    unset multiplot
}
