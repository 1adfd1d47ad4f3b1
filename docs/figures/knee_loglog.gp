# knee_loglog.gp -- critical delay tau_c against 1 - mu on log-log axes from an `amsgd knee`
# CSV: measured points (the crossings interpolated between the bracketing integer delays) with
# bootstrap intervals, the fitted power law, the linear-stability
# critical delay, the delay-equation law pi (1-mu) / (2 h), the paper's (1-mu)^2 law and,
# when liu2018_knee_arrows.csv is beside the script, the knee arrows of the paper's own figure.
# The paper's bound has an arbitrary constant, so its line is anchored at the measured point
# of the largest 1 - mu: only its slope is compared with the data.
# Usage: gnuplot -c docs/figures/knee_loglog.gp knee.csv out.png|out.svg [title]
in = ARG1
out = ARG2
title = (ARGC >= 3 ? ARG3 : "critical delay versus momentum")
# the output format follows the file name: .svg writes SVG, anything else PNG
# (gnuplot substrings are 1-based: the last three characters start at strlen - 2)
if (strlen(out) > 4 && out[strlen(out)-2:] eq "svg") {
    set terminal svg size 860,600 fontscale 1.25 font ",11" noenhanced background "white"
} else {
    set terminal pngcairo size 860,600 font ",11" noenhanced
}
set output out
set datafile separator ","
stats in using (log($2)):(log($8)) nooutput
plin = STATS_slope
xlo = exp(STATS_min_x) / 1.3
xhi = exp(STATS_max_x) * 1.3
# the paper's own knee arrows (read off its figure), if the file is present
arrows = ARG0[1:strlen(ARG0)-strlen("knee_loglog.gp")] . "liu2018_knee_arrows.csv"
have_arrows = int(system("test -r '".arrows."' && echo 1 || echo 0"))
parr = 0
if (have_arrows) {
    stats arrows using (log($2)):(log($3)) nooutput
    parr = STATS_slope
} else {
    arrows = in  # drawn with every ::1000000: nothing, and no legend entry below
}
set logscale xy
set xrange [xlo : xhi]
set xtics ("0.02" 0.02, "0.05" 0.05, "0.1" 0.1, "0.2" 0.2, "0.3" 0.3, "0.5" 0.5, "1" 1)
set key bottom right box opaque spacing 1.15 font ",10"
set xlabel "1 - mu"
set ylabel "critical delay tau_c (steps)"
set grid xtics ytics mytics lc rgb "#e0e0e0"
set title title
p = real(system("sed -n 2p '".in."' | cut -d, -f11"))
plo = real(system("sed -n 2p '".in."' | cut -d, -f12"))
phi = real(system("sed -n 2p '".in."' | cut -d, -f13"))
finite(x) = (x == x && abs(x) < 1e300) ? x : 1/0
# the anchor: the measured point of the largest 1 - mu
stats in using 2 nooutput
xa = STATS_max
ya = real(system(sprintf("awk -F, 'NR > 1 && $2 == %.17g { print $3; exit }' '%s'", xa, in)))
mua = 1 - xa
plot in using 2:3:5:6 with yerrorbars pt 7 ps 1.2 lw 2 lc rgb "black" title "measured tau_c, interpolated (bars: 95% bootstrap, within the marker)", \
     in using 2:7 with lines lw 2 lc rgb "black" title sprintf("fit tau_c ~ (1-mu)^p: p = %.3f, bootstrap CI [%.3f, %.3f]", p, plo, phi), \
     in using 2:(finite($8)) with linespoints lw 2 dt 2 pt 6 lc rgb "red" title sprintf("linear stability (fit p = %.2f)", plin), \
     in using 2:(finite($9)) with lines lw 2 dt 3 lc rgb "blue" title "delay equation pi (1-mu) / (2 h), p = 1", \
     in using 2:(ya * ($2 / xa) ** 2) with lines lw 2 dt 4 lc rgb "dark-green" \
         title sprintf("paper law (1-mu)^2, p = 2, anchored at mu = %.2g (slope only)", mua), \
     arrows using 2:(have_arrows ? $3 : 1/0) with points pt 9 ps 1.6 lc rgb "#9400d3" \
         title (have_arrows ? sprintf("knee arrows of the paper's own figure (fit p = %.2f)", parr) : "")
