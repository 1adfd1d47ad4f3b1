# phase_lines.gp -- error versus delay, one curve per momentum with a +-2 SEM band, from an
# `amsgd phase` CSV (the streaming-PCA figure of Liu et al. 2018 with --preset liu2018).
# A point where more than 10 % of the replicas diverged is an open marker labelled with that
# share (its mean is over the survivors); the first delay where every replica diverged is a
# cross at the top; each momentum's linear-stability delay (the CSV's boundary_linear) is a
# dashed vertical line in its colour; the optional OU file (lines "mu,prediction", from
# `amsgd theory`'s stationary_error) adds the tau = 0 prediction as an open diamond.
# Usage: gnuplot -c docs/figures/phase_lines.gp phase.csv out.png|out.svg [title] [ou.csv]
in = ARG1
out = ARG2
title = (ARGC >= 3 ? ARG3 : "stationary error versus delay")
ou = (ARGC >= 4 ? ARG4 : "")
# the output format follows the file name: .svg writes SVG, anything else PNG
# (gnuplot substrings are 1-based: the last three characters start at strlen - 2)
if (strlen(out) > 4 && out[strlen(out)-2:] eq "svg") {
    set terminal svg size 960,700 fontscale 1.25 font ",11" enhanced background "white"
} else {
    set terminal pngcairo size 960,700 font ",11" enhanced
}
set output out
set datafile separator ","
set key at screen 0.5, screen 0.01 center bottom horizontal maxcols 3 box opaque spacing 1.1 font ",10" noenhanced width -2
set bmargin 10
# distinct, readable line colours (no pale yellow)
set linetype 1 lc rgb "#0072B2"
set linetype 2 lc rgb "#009E73"
set linetype 3 lc rgb "#D55E00"
set linetype 4 lc rgb "#CC79A7"
set linetype 5 lc rgb "#000000"
set linetype 6 lc rgb "#E69F00"
set linetype 7 lc rgb "#56B4E9"
set linetype 8 lc rgb "#999999"
set linetype cycle 8
set xlabel "delay tau (steps)" noenhanced
set ylabel "stationary error  1 - (v_1^T v)^2 / |v|^2"
set title title noenhanced
set grid ytics mytics lc rgb "#dddddd"
mus = system("tail -n +2 '".in."' | cut -d, -f1 | sort -u -g | tr '\n' ' '")
n = words(mus)
sel(m, x) = (abs($1 - m) < 1e-9 && x == x) ? x : 1/0
finite(x) = (x == x && abs(x) < 1e300) ? x : 1/0
# y range from the data (bands included), so the markers at the top have a place
stats in using (finite($3 + 2 * $4)) nooutput
ytop = STATS_max * 2.0
pos(x) = (x == x && x > 0 && x < 1e300) ? x : 1/0
stats in using (pos($3 - 2 * $4)) nooutput
ybot = STATS_min / 1.6
stats in using 2 nooutput
set xrange [STATS_min - 4 : STATS_max + 4]
set logscale y
set yrange [ybot : ytop]
# the linear-stability delay of each momentum, as a dashed line in its colour
do for [i = 1:n] {
    tl = real(system(sprintf("awk -F, 'NR > 1 && $1 == %s { print $6 + 0; f = 1; exit } END { if (!f) print -1e9 }' '%s'", word(mus, i), in)))
    if (tl == tl && tl < 1e300) {
        set arrow from tl, graph 0 to tl, graph 1 nohead dt 2 lw 1.5 lc i front
    }
}
# the first delay where every replica diverged, per momentum
alldiv(m) = real(system(sprintf("awk -F, 'NR > 1 && $1 == %s && $5 >= 1 { print $2; f = 1; exit } END { if (!f) print -1e9 }' '%s'", m, in)))
has_ou = (strlen(ou) > 0)
ytopm = ytop / 1.35
plot for [i = 1:n] in using 2:(sel(word(mus, i) + 0, $3 - 2 * $4)):(sel(word(mus, i) + 0, $3 + 2 * $4)) \
         with filledcurves fs transparent solid 0.25 noborder lc i \
         title (i == 1 ? "band: +-2 SEM over the surviving replicas" : ""), \
     for [i = 1:n] in using 2:(sel(word(mus, i) + 0, $3)) with lines lw 2 lc i \
         title sprintf("mu = %s", word(mus, i)), \
     for [i = 1:n] in using 2:(sel(word(mus, i) + 0, $5 <= 0.1 ? $3 : 1/0)) with points pt 7 ps 0.8 lc i \
         notitle, \
     for [i = 1:n] in using 2:(sel(word(mus, i) + 0, $5 > 0.1 && $5 < 1 ? $3 : 1/0)) with points pt 6 ps 1.6 lw 2 lc i \
         title (i == 1 ? "open: > 10 % of replicas diverged (label: share)" : ""), \
     for [i = 1:n] in using 2:(sel(word(mus, i) + 0, $5 > 0.1 && $5 < 1 ? $3 : 1/0)):(sprintf("%.0f%%", 100 * $5)) \
         with labels offset 0, 1.1 font ",8" tc lt i notitle, \
     for [i = 1:n] '+' using (alldiv(word(mus, i))):(ytopm) every ::0::0 with points pt 2 ps 2 lw 2 lc i \
         title (i == 1 ? "x: every replica diverged from this delay on" : ""), \
     for [i = 1:n] (has_ou ? ou : in) using (has_ou ? 0 : 1/0):(has_ou && abs($1 - (word(mus, i) + 0)) < 1e-9 ? $2 : 1/0) \
         with points pt 12 ps 2.2 lw 2 lc i title (i == 1 && has_ou ? "OU prediction at tau = 0 (amsgd theory)" : ""), \
     NaN with lines dt 2 lw 1.5 lc rgb "black" title "dashed: linear-stability delay per mu"
