# runtime.gp -- time per iteration against K for the parameter-server variants (P = 8),
# measured (points with standard-error bars) and closed form (open circles, where one exists),
# for three runtime distributions. Data: the CSV files beside this script, made by
#   amsgd runtime --workers 8 --K 1,2,3,4,5,6,7,8 --runtime exp:1        -o runtime_exp.csv
#   amsgd runtime --workers 8 --K 1,2,3,4,5,6,7,8 --runtime shiftexp:1:1 -o runtime_shiftexp.csv
#   amsgd runtime --workers 8 --K 1,2,3,4,5,6,7,8 --runtime pareto:2.5:1 -o runtime_pareto.csv
# Render: cd docs/figures && gnuplot runtime.gp   (writes runtime.png)
set terminal pngcairo size 1500,480 font ",10"
set output "runtime.png"
set datafile separator ","
set datafile missing "nan"
set key top left font ",9"
set xlabel "K"
set ylabel "time per iteration"
set xrange [0.5:8.5]
set logscale y
set multiplot layout 1,3
sel(name, col) = (strcol(1) eq name ? column(col) : NaN)
files = "runtime_exp.csv runtime_shiftexp.csv runtime_pareto.csv"
titles = "'exp:1' 'shiftexp:1:1' 'pareto:2.5:1'"
names = "k-sync k-batch-sync k-async k-batch-async"
do for [i = 1:3] {
    f = word(files, i)
    set title sprintf("P = 8, runtime %s", word(titles, i))
    plot for [j = 1:4] f using 2:(sel(word(names, j), 3)):(sel(word(names, j), 4)) \
             with yerrorbars pt 7 ps 0.6 lc j title word(names, j), \
         for [j = 1:4] f using 2:(sel(word(names, j), 5)) with points pt 6 ps 1.4 lc j notitle, \
         f using (1):(sel("sync", 3)):(8) with xerrorbars lc 5 pt 0 title "sync (all P)", \
         f using (1):(sel("async", 3)):(8) with xerrorbars lc 6 pt 0 title "async"
}
unset multiplot
