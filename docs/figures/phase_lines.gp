# phase_lines.gp -- error versus delay, one curve per momentum with a +-2 SEM band, from an
# `amsgd phase` CSV (the streaming-PCA figure of Liu et al. 2018 with --preset liu2018).
# Usage: gnuplot -c docs/figures/phase_lines.gp phase.csv out.png|out.svg [title]
in = ARG1
out = ARG2
title = (ARGC >= 3 ? ARG3 : "stationary error versus delay")
# the output format follows the file name: .svg writes SVG, anything else PNG
if (strlen(out) > 4 && out[strlen(out)-3:] eq "svg") {
    set terminal svg size 900,600 font ",11" noenhanced
} else {
    set terminal pngcairo size 900,600 font ",11" noenhanced
}
set output out
set datafile separator ","
set key top left box opaque
set xlabel "delay tau"
set ylabel "stationary error  1 - (v1.v)^2/|v|^2"
set logscale y
set title title
mus = system("tail -n +2 '".in."' | cut -d, -f1 | sort -u -g | tr '\n' ' '")
sel(m, x) = (abs($1 - m) < 1e-9 && x == x) ? x : 1/0
plot for [i = 1:words(mus)] in using 2:(sel(word(mus, i) + 0, $3 - 2 * $4)):(sel(word(mus, i) + 0, $3 + 2 * $4)) \
         with filledcurves fs transparent solid 0.25 lc i notitle, \
     for [i = 1:words(mus)] in using 2:(sel(word(mus, i) + 0, $3)) with linespoints lw 2 pt 7 ps 0.7 lc i \
         title sprintf("mu = %s", word(mus, i))
