# speedup.gp -- Liu et al.'s linear acceleration from an `amsgd phase --metric time` CSV whose
# delay axis is tau = P - 1 (P workers, constant delay) at several momenta: on top the
# efficiency S / P = T(tau = 0) / T(tau) of the mean time to err <= eps over the runs that
# reach it (1: the linear speed-up S = P; an open circle: most runs diverge later), below the fraction of runs diverged by the horizon; the dashed lines mark
# P = tau_c + 1, tau_c the critical delay of the linear recursion (its radial mode).
# Usage: gnuplot -c docs/figures/speedup.gp speedup.csv out.png|out.svg [title]
in = ARG1
out = ARG2
title = (ARGC >= 3 ? ARG3 : "speed-up against workers")
if (strlen(out) > 4 && out[strlen(out)-2:] eq "svg") {
    set terminal svg size 860,760 fontscale 1.25 font ",11" noenhanced background "white"
} else {
    set terminal pngcairo size 860,760 font ",11" noenhanced
}
set output out
set datafile separator ","
mus = system("awk -F, 'NR > 1 && !seen[$1]++ { printf \"%s \", $1 }' '".in."'")
nmu = words(mus)
sel(m) = sprintf("< awk -F, 'NR > 1 && $1 == %s' '%s'", m, in)
array T0[nmu]
array TC[nmu]
do for [i = 1:nmu] {
    stats sel(word(mus, i)) using 3 every ::0::0 nooutput
    T0[i] = STATS_min
    stats sel(word(mus, i)) using 6 every ::0::0 nooutput
    TC[i] = STATS_min + 1
}
colour(i) = word("#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e", i)
set logscale x 2
set xrange [1 : 8192]
set format x "%.0f"
set grid xtics ytics lc rgb "#e0e0e0"
set multiplot layout 2,1 title title
set key bottom left box opaque font ",10"
set ylabel "efficiency S / P = T(1) / T(P)"
set yrange [0 : 1.1]
set xlabel ""
set lmargin 10
do for [i = 1:nmu] {
    set arrow i from TC[i], graph 0 to TC[i], graph 1 nohead dt 2 lw 1.5 lc rgb colour(i)
}
plot for [i = 1:nmu] sel(word(mus, i)) using ($2 + 1):(T0[i] / $3) \
         with lines lw 1.5 lc rgb colour(i) title "mu = ".word(mus, i), \
     for [i = 1:nmu] sel(word(mus, i)) using ($2 + 1):($5 <= 0.5 ? T0[i] / $3 : NaN) \
         with points pt 7 ps 0.9 lc rgb colour(i) notitle, \
     for [i = 1:nmu] sel(word(mus, i)) using ($2 + 1):($5 > 0.5 ? T0[i] / $3 : NaN) \
         with points pt 6 ps 1.1 lw 1.5 lc rgb colour(i) notitle, \
     NaN with points pt 6 ps 1.1 lc rgb "gray40" title "open: most runs diverge later", \
     1 with lines dt 3 lc rgb "black" title "linear speed-up S = P", \
     NaN with lines dt 2 lc rgb "gray40" title "P = tau_c + 1 (linear stability)"
set key top left box opaque font ",10"
set ylabel "fraction diverged by t = 20"
set xlabel "workers P (constant delay P - 1 updates)"
set yrange [-0.05 : 1.05]
plot for [i = 1:nmu] sel(word(mus, i)) using ($2 + 1):5 \
         with linespoints pt 7 ps 0.8 lw 1.5 lc rgb colour(i) title "mu = ".word(mus, i)
unset multiplot
