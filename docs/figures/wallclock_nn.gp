# wallclock_nn.gp -- test error against wall-clock time of Dutta et al.'s six parameter-server
# variants training a network on Fashion-MNIST (amsgd wallclock --model, docs/wallclock.md):
# P = 8 learners with exp:1 runtimes, K = 4, minibatches of 32 rows, plain SGD on the mean
# gradient of each update, test error on the first 2000 test rows, 5 seeds. Lines: the mean
# over seeds at each wall-clock time; shaded bands: +- 2 standard errors over the seeds.
# Data: the CSV files beside this script, made by
#   amsgd wallclock --model mlr --grid 51 -o wallclock_nn_mlr.csv
#   amsgd wallclock --model mlr --grid 51 --lr 0.02 -o wallclock_nn_mlr_lr002.csv
#   amsgd wallclock --model mlp:64 --grid 51 -o wallclock_nn_mlp.csv
# Render: cd docs/figures && gnuplot wallclock_nn.gp   (writes wallclock_nn.png and
#   wallclock_nn.svg)
set datafile separator ","
set key top right font ",9" box opaque spacing 1.05
set xlabel "wall-clock time (units of the mean learner runtime E[X] = 1)"
set ylabel "test error (1 - accuracy)"
set grid xtics ytics lc rgb "#e6e6e6"
set linetype 1 lc rgb "#000000"
set linetype 2 lc rgb "#E69F00"
set linetype 3 lc rgb "#CC79A7"
set linetype 4 lc rgb "#D55E00"
set linetype 5 lc rgb "#009E73"
set linetype 6 lc rgb "#0072B2"
set xrange [0:500]
set yrange [0.1:0.5]
sel(name, col) = (strcol(1) eq name && column(6) > 0 ? column(col) : NaN)
vars = "sync k-sync:4 k-batch-sync:4 async k-async:4 k-batch-async:4"
do for [fmt in "png svg"] {
    if (fmt eq "png") { set terminal pngcairo size 1500,520 font ",10" }
    if (fmt eq "svg") { set terminal svg size 1500,520 fontscale 1.25 font ",10" background "white" }
    set output "wallclock_nn." . fmt
    set multiplot layout 1,3 title "Fashion-MNIST, P = 8 learners, exp:1 runtimes, K = 4, batch 32, SGD; mean over 5 seeds, bands +-2 SE (every curve starts near 0.9 at t = 0)" font ",11"
    do for [panel = 1:3] {
        file = word("wallclock_nn_mlr.csv wallclock_nn_mlr_lr002.csv wallclock_nn_mlp.csv", panel)
        set title word("'multinomial logistic regression, lr 0.1' 'multinomial logistic regression, lr 0.02' 'MLP 784-64-10 (ReLU), lr 0.1'", panel)
        plot for [j = 1:6] file using (sel(word(vars, j), 2)):(sel(word(vars, j), 3) - 2 * sel(word(vars, j), 4)):(sel(word(vars, j), 3) + 2 * sel(word(vars, j), 4)) \
                with filledcurves fs transparent solid 0.18 lc j notitle, \
             for [j = 1:6] file using (sel(word(vars, j), 2)):(sel(word(vars, j), 3)) \
                with lines lw (j == 4 ? 2.4 : 1.8) dt 1 + (j >= 5) lc j title word(vars, j)
    }
    unset multiplot
}
