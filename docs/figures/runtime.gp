# runtime.gp -- time per iteration against K for the parameter-server variants (P = 8),
# measured (filled markers with standard-error bars) and closed form (open circles, where one
# exists), for three runtime distributions. Time is in the units of the runtime's parameters
# (exp:1 has mean E[X] = 1). The four K-variants are shifted slightly sideways, each with its
# own marker: for exponential runtimes k-sync and k-async coincide (memorylessness), and so
# do k-batch-sync and k-batch-async, which would otherwise hide one under the other.
# Data: the CSV files beside this script, made by
#   amsgd runtime --workers 8 --K 1,2,3,4,5,6,7,8 --runtime exp:1        -o runtime_exp.csv
#   amsgd runtime --workers 8 --K 1,2,3,4,5,6,7,8 --runtime shiftexp:1:1 -o runtime_shiftexp.csv
#   amsgd runtime --workers 8 --K 1,2,3,4,5,6,7,8 --runtime pareto:2.5:1 -o runtime_pareto.csv
# Render: cd docs/figures && gnuplot runtime.gp   (writes runtime.png and runtime.svg)
set datafile separator ","
set xlabel "K (k-sync, k-async: gradients per update; k-batch: gradients per batch)"
set ylabel "time per server update (time units of the runtime law)"
set xrange [0.5:8.5]
set logscale y
set yrange [0.02:12]
set grid ytics lc rgb "#e0e0e0"
set linetype 1 lc rgb "#0072B2"
set linetype 2 lc rgb "#009E73"
set linetype 3 lc rgb "#D55E00"
set linetype 4 lc rgb "#CC79A7"


do for [fmt in "png svg"] {
    if (fmt eq "png") { set terminal pngcairo size 1500,560 font ",10" }
    if (fmt eq "svg") { set terminal svg size 1500,560 fontscale 1.25 font ",10" background "white" }
    set output "runtime." . fmt
    set multiplot layout 1,3 title "parameter server with P = 8 learners: measured (200 replicas x 1000 updates, +-1 SE) and closed forms" font ",11"
    sel(name, col) = (strcol(1) eq name ? column(col) : NaN)
    files = "runtime_exp.csv runtime_shiftexp.csv runtime_pareto.csv"
    titles = "'exp:1 (E[X] = 1)' 'shiftexp:1:1 (E[X] = 2)' 'pareto:2.5:1 (E[X] = 5/3)'"
    names = "k-sync k-batch-sync k-async k-batch-async"
    pts = "7 5 9 11"
    dodge(j) = (j - 2.5) * 0.1
    do for [i = 1:3] {
        f = word(files, i)
        set title sprintf("runtime %s", word(titles, i))
        if (i == 1) {
            set key bottom right font ",9" box opaque spacing 1.05
            set label 1 "k-sync = k-async and k-batch-sync = k-batch-async\n(memoryless runtimes): shifted apart" at graph 0.03, graph 0.93 font ",9"
        } else {
            unset key
            unset label 1
        }
        plot for [j = 1:4] f using ($2 + dodge(j)):(sel(word(names, j), 3)):(sel(word(names, j), 4)) \
                 with yerrorbars pt (word(pts, j) + 0) ps 0.9 lc j title word(names, j), \
             for [j = 1:4] f using ($2 + dodge(j)):(sel(word(names, j), 5)) with points pt 6 ps 1.8 lc j notitle, \
             NaN with points pt 6 ps 1.8 lc rgb "#555555" title "open circle: closed form", \
             f using (1):(sel("sync", 3)):(8) with xerrorbars lw 2 lc rgb "black" pt 0 title "sync (waits for all P)", \
             f using (1):(sel("async", 3)):(8) with xerrorbars lw 2 dt 2 lc rgb "#777777" pt 0 title "async (every gradient)"
    }
    unset multiplot
}
