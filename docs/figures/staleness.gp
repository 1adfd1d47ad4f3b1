# staleness.gp -- steps to the target loss under Uniform{0..s} staleness (P = 4 workers),
# normalised by s = 0, one curve per optimiser (error bars: standard error of the steps at s
# divided by the s = 0 mean). The s axis is categorical (s = 0, 1, 2, 4, 8, 16 evenly
# spaced) and each optimiser is shifted slightly sideways with its own marker, so curves that
# coincide stay visible. A cell where some run never reached the target is an open marker
# (its mean is over the runs that did, biased low); a cell where none did is a cross at the
# top of the panel.
# Data: the CSV files beside this script, made by
#   amsgd staleness --objective lsq      --s 0,1,2,4,8,16 -o staleness_lsq.csv
#   amsgd staleness --objective logistic --s 0,1,2,4,8,16 -o staleness_logistic.csv
# Render: cd docs/figures && gnuplot staleness.gp   (writes staleness.png and staleness.svg)
set datafile separator ","
set bmargin 8
set xlabel offset 0, 0.3
set xlabel "staleness bound s (steps; categorical axis)"
set ylabel "steps to target / steps at s = 0"
set logscale y
set yrange [0.3:60]
set grid ytics lc rgb "#e0e0e0"
set linetype 1 lc rgb "#0072B2"
set linetype 2 lc rgb "#009E73"
set linetype 3 lc rgb "#D55E00"
set linetype 4 lc rgb "#CC79A7"
set linetype 5 lc rgb "#000000"
set linetype 6 lc rgb "#E69F00"
sv = "0 1 2 4 8 16"
set xtics ("0" 0, "1" 1, "2" 2, "4" 3, "8" 4, "16" 5)
set xrange [-0.5:5.5]
xi(s) = sum [i = 1:6] (abs(s - word(sv, i)) < 1e-9 ? i - 1 : 0)
do for [fmt in "png svg"] {
    if (fmt eq "png") { set terminal pngcairo size 1200,600 font ",10" }
    if (fmt eq "svg") { set terminal svg size 1200,600 fontscale 1.25 font ",10" background "white" }
    set output "staleness." . fmt
    set multiplot layout 1,2 title "normalised steps to F - F* <= 0.01 (F(x0) - F*), P = 4 workers, batch 8, 20 runs per cell, at most 20000 steps" font ",11"
    opts = "sgd momentum nesterov adam rmsprop adagrad"
    nnone = int(system("awk -F, 'FNR > 1 && $7 >= 1 { n++ } END { print n + 0 }' staleness_lsq.csv staleness_logistic.csv"))
    npart = int(system("awk -F, 'FNR > 1 && $7 > 0 && $7 < 1 { n++ } END { print n + 0 }' staleness_lsq.csv staleness_logistic.csv"))
    pts = "7 5 9 11 13 15"
    lr(f, name) = system(sprintf("awk -F, '$2 == \"%s\" { print $4; exit }' %s", name, f))
    dodge(j) = (j - 3.5) * 0.07
    # column 7: share of the runs that never reached the target
    ok(name, col) = (strcol(2) eq name && column(7) == 0 ? column(col) : NaN)
    part(name, col) = (strcol(2) eq name && column(7) > 0 && column(7) < 1 ? column(col) : NaN)
    none(name) = (strcol(2) eq name && column(7) >= 1 ? 30 : NaN)
    do for [obj in "lsq logistic"] {
        f = sprintf("staleness_%s.csv", obj)
        set title sprintf("%s (synthetic, d = 10, n = 1000)", obj)
        # one key for both panels, below them
        if (obj eq "lsq") {
            set key at screen 0.5, screen 0.01 center bottom horizontal maxrows 2 font ",10" box opaque spacing 1.1
        } else {
            unset key
        }
        plot for [j = 1:6] f using (xi($1) + dodge(j)):(ok(word(opts, j), 8)):(ok(word(opts, j), 8) * ok(word(opts, j), 6) / ok(word(opts, j), 5)) \
                with yerrorlines pt (word(pts, j) + 0) ps 0.9 lw 1.5 lc j \
                title sprintf("%s (step %s)", word(opts, j), lr(f, word(opts, j))), \
             for [j = 1:6] f using (xi($1) + dodge(j)):(part(word(opts, j), 8)) with points pt (word(pts, j) - 1) ps 1.3 lw 1.5 lc j notitle, \
             for [j = 1:6] f using (xi($1) + dodge(j)):(none(word(opts, j))) with points pt 2 ps 1.5 lw 2 lc j notitle, \
             NaN with points pt 2 ps 1.5 lw 2 lc rgb "black" title (nnone > 0 ? "x: no run reached the target" : ""), \
             NaN with points pt 6 ps 1.3 lw 1.5 lc rgb "black" title (npart > 0 ? "open: some runs did not reach it" : ""), \
             1 with lines dt 3 lc rgb "#888888" notitle
    }
    unset multiplot
}
