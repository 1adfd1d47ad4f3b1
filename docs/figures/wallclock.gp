# wallclock.gp -- error against wall-clock time for the parameter-server variants (P = 8
# learners, exp:1 runtimes, K = 4), on strongly convex streaming least squares (F - F*) and
# on streaming PCA with Async-MSGD (1 - (v1.v)^2/|v|^2). Shaded bands: +- 2 standard errors.
# Data: the CSV files beside this script, made by
#   amsgd wallclock --objective lsq --grid 201 -o wallclock_lsq.csv
#   amsgd wallclock --objective pca --eta 0.005 --updates 3000 --grid 101 -o wallclock_pca.csv
# Render: cd docs/figures && gnuplot wallclock.gp   (writes wallclock.png)
set terminal pngcairo size 1200,460 font ",10"
set output "wallclock.png"
set datafile separator ","
set key top right font ",9"
set xlabel "wall-clock time (units of 1/RATE)"
set logscale xy
set format y "10^{%T}"
set multiplot layout 1,2
sel(name, col) = (strcol(1) eq name && column(3) > 0 ? column(col) : NaN)
vars = "sync k-sync:4 k-batch-sync:4 async k-async:4 k-batch-async:4"
set title "least squares, d = 4, H eigenvalues 2 .. 0.5, sigma = 0.5, eta = 0.02"
set ylabel "F(w) - F*"
set xrange [1:6000]
plot for [j = 1:6] "wallclock_lsq.csv" using (sel(word(vars, j), 3)):(sel(word(vars, j), 5) - 2 * sel(word(vars, j), 6)):(sel(word(vars, j), 5) + 2 * sel(word(vars, j), 6)) \
        with filledcurves fs transparent solid 0.2 lc j notitle, \
     for [j = 1:6] "wallclock_lsq.csv" using (sel(word(vars, j), 3)):(sel(word(vars, j), 5)) with lines lw 1.5 lc j title word(vars, j)
set title "streaming PCA (Async-MSGD), spectrum 4,3,2,1, eta = 0.005"
set ylabel "1 - (v^1.v)^2 / |v|^2"
set xrange [1:10000]
plot for [j = 1:6] "wallclock_pca.csv" using (sel(word(vars, j), 3)):(sel(word(vars, j), 5) - 2 * sel(word(vars, j), 6)):(sel(word(vars, j), 5) + 2 * sel(word(vars, j), 6)) \
        with filledcurves fs transparent solid 0.2 lc j notitle, \
     for [j = 1:6] "wallclock_pca.csv" using (sel(word(vars, j), 3)):(sel(word(vars, j), 5)) with lines lw 1.5 lc j title word(vars, j)
unset multiplot
