# adaptive.gp -- constant step (eta = 0.02) against the staleness-adaptive step
# eta_j = min(C / |w_j - w_tau(j)|^2, eta_max), C = 1e-4, eta_max = 0.02, for async and
# k-async (K = 4) with P = 8 exp:1 learners on the least-squares problem of wallclock.gp.
# Shaded bands: +-2 standard errors over the 200 replicas; points where every replica
# diverged are left out.
# Data: the CSV files beside this script, made by
#   amsgd wallclock --variants async,k-async:4 --grid 201 -o adaptive_const.csv
#   amsgd wallclock --variants async,k-async:4 --lr adaptive:1e-4:0.02 --grid 201 \
#         -o adaptive_adaptive.csv
# Render: cd docs/figures && gnuplot adaptive.gp   (writes adaptive.png and adaptive.svg)
set datafile separator ","
set key bottom left font ",9" box opaque spacing 1.1
set title "constant (solid) against staleness-adaptive step (dashed): least squares d = 4, P = 8, exp:1 runtimes\nadaptive eta_j = min(C / |w_j - w_tau(j)|^2, MAX), C = 1e-4, MAX = 0.02; constant eta = 0.02; 200 replicas, bands +-2 SE" font ",9" noenhanced
set xlabel "wall-clock time (units of the mean learner runtime E[X] = 1/RATE)"
set ylabel "F(w) - F*"
set logscale xy
set format y "10^{%T}"
set xrange [1:1500]
set yrange [1e-5:10]
set grid xtics ytics lc rgb "#e6e6e6"
set linetype 1 lc rgb "#D55E00"
set linetype 2 lc rgb "#0072B2"
sel(name, col) = (strcol(1) eq name && column(3) > 0 && column(7) > 0 ? column(col) : NaN)
do for [fmt in "png svg"] {
    if (fmt eq "png") { set terminal pngcairo size 800,540 font ",10" }
    if (fmt eq "svg") { set terminal svg size 800,540 fontscale 1.25 font ",10" background "white" }
    set output "adaptive." . fmt
    plot for [v in "async k-async:4"] for [f in "adaptive_const.csv adaptive_adaptive.csv"] \
            f using (sel(v, 3)):(sel(v, 5) - 2 * sel(v, 6)):(sel(v, 5) + 2 * sel(v, 6)) \
            with filledcurves fs transparent solid 0.2 noborder lc (v eq "async" ? 1 : 2) notitle, \
         "adaptive_const.csv" using (sel("async", 3)):(sel("async", 5)) with lines lw 2 lc 1 title "async, constant step", \
         "adaptive_adaptive.csv" using (sel("async", 3)):(sel("async", 5)) with lines lw 2 lc 1 dt 2 title "async, adaptive step", \
         "adaptive_const.csv" using (sel("k-async:4", 3)):(sel("k-async:4", 5)) with lines lw 2 lc 2 title "k-async:4, constant step", \
         "adaptive_adaptive.csv" using (sel("k-async:4", 3)):(sel("k-async:4", 5)) with lines lw 2 lc 2 dt 2 title "k-async:4, adaptive step"
}
