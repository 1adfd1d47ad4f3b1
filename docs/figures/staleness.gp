# staleness.gp -- steps to the target loss under Uniform{0..s} staleness (P = 4 workers),
# normalised by s = 0, one curve per optimiser (error bars: standard error of the steps at s
# divided by the s = 0 mean; cells where some run never reached the target are left out:
# their mean over the runs that did is biased).
# Data: the CSV files beside this script, made by
#   amsgd staleness --objective lsq      --s 0,1,2,4,8,16 -o staleness_lsq.csv
#   amsgd staleness --objective logistic --s 0,1,2,4,8,16 -o staleness_logistic.csv
# Render: cd docs/figures && gnuplot staleness.gp   (writes staleness.png)
set terminal pngcairo size 1100,450 font ",10"
set output "staleness.png"
set datafile separator ","
set datafile missing "nan"
set key top left font ",9"
set xlabel "staleness bound s"
set ylabel "steps to target / steps at s = 0"
set logscale y
set xrange [-0.5:16.5]
set multiplot layout 1,2
sel(name, col) = (strcol(2) eq name && column(7) == 0 ? column(col) : NaN)
opts = "sgd momentum nesterov adam rmsprop adagrad"
do for [obj in "lsq logistic"] {
    f = sprintf("staleness_%s.csv", obj)
    set title sprintf("%s (synthetic, d = 10, n = 1000)", obj)
    plot for [j = 1:6] f using 1:(sel(word(opts, j), 8)):(sel(word(opts, j), 8) * sel(word(opts, j), 6) / sel(word(opts, j), 5)) \
        with yerrorlines pt 7 ps 0.6 lc j title word(opts, j)
}
unset multiplot
