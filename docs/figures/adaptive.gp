# adaptive.gp -- constant step (eta = 0.02) against the staleness-adaptive step
# eta_j = min(C / |w_j - w_tau(j)|^2, eta_max), C = 1e-4, eta_max = 0.02, for async and
# k-async (K = 4) with P = 8 exp:1 learners on the least-squares problem of wallclock.gp.
# Data: the CSV files beside this script, made by
#   amsgd wallclock --variants async,k-async:4 --grid 201 -o adaptive_const.csv
#   amsgd wallclock --variants async,k-async:4 --lr adaptive:1e-4:0.02 --grid 201 \
#         -o adaptive_adaptive.csv
# Render: cd docs/figures && gnuplot adaptive.gp   (writes adaptive.png)
set terminal pngcairo size 700,460 font ",10"
set output "adaptive.png"
set datafile separator ","
set key top right font ",9"
set xlabel "wall-clock time (units of 1/RATE)"
set ylabel "F(w) - F*"
set logscale xy
set format y "10^{%T}"
set xrange [1:1500]
sel(name, col) = (strcol(1) eq name && column(3) > 0 ? column(col) : NaN)
plot "adaptive_const.csv" using (sel("async", 3)):(sel("async", 5)) with lines lw 1.5 lc 1 title "async, constant step", \
     "adaptive_adaptive.csv" using (sel("async", 3)):(sel("async", 5)) with lines lw 1.5 lc 1 dt 2 title "async, adaptive step", \
     "adaptive_const.csv" using (sel("k-async:4", 3)):(sel("k-async:4", 5)) with lines lw 1.5 lc 2 title "k-async:4, constant step", \
     "adaptive_adaptive.csv" using (sel("k-async:4", 3)):(sel("k-async:4", 5)) with lines lw 1.5 lc 2 dt 2 title "k-async:4, adaptive step"
