# phase_heatmap.gp -- heat map of an `amsgd phase` CSV (metric over delay x momentum) with the
# theory overlays: linear-stability boundary, delay-equation boundary, the paper's bound and,
# for geometric staleness, the implicit momentum 1 - 1/M.
# Usage: gnuplot -c docs/figures/phase_heatmap.gp phase.csv out.png|out.svg [title] [log]
in = ARG1
out = ARG2
title = (ARGC >= 3 ? ARG3 : "amsgd phase")
# the output format follows the file name: .svg writes SVG, anything else PNG
if (strlen(out) > 4 && out[strlen(out)-3:] eq "svg") {
    set terminal svg size 900,640 font ",11" noenhanced
} else {
    set terminal pngcairo size 900,640 font ",11" noenhanced
}
set output out
set datafile separator ","
set key below horizontal box opaque
set xlabel "delay parameter"
set ylabel "momentum mu"
set title title
set cblabel "metric"
if (ARGC >= 4 && ARG4 eq "log") { set logscale cb; set cbtics 2; set format cb "%.2g" }
set palette rgbformulae 33,13,10
nx = int(system("tail -n +2 '".in."' | cut -d, -f2 | sort -u | wc -l"))
ny = int(system("tail -n +2 '".in."' | cut -d, -f1 | sort -u | wc -l"))
stats in using 2 nooutput
dx = (nx > 1 ? (STATS_max - STATS_min) / (nx - 1) : 1) / 2
set xrange [STATS_min - dx : STATS_max + dx]
stats in using 1 nooutput
dy = (ny > 1 ? (STATS_max - STATS_min) / (ny - 1) : 0.05) / 2
set yrange [STATS_min - dy : STATS_max + dy]
mu0 = real(system("sed -n 2p '".in."' | cut -d, -f1"))
finite(x) = (x == x && abs(x) < 1e300) ? x : 1/0
plot in using 2:1:(dx):(dy):(finite($3)) with boxxy fs solid 1.0 noborder palette notitle, \
     in using (finite($6)):1 with linespoints lw 2 lc rgb "black" pt 7 title "linear stability", \
     in using (finite($7)):1 with lines lw 2 dt 2 lc rgb "blue" title "delay equation", \
     in using (finite($8)):1 with lines lw 2 dt 4 lc rgb "dark-green" title "paper bound", \
     in using 2:(abs($1 - mu0) < 1e-12 ? finite($9) : 1/0) with lines lw 2 lc rgb "magenta" title "implicit momentum 1-1/M"
