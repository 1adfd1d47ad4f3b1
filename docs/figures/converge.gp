# Weak error of the Async-MSGD ensemble over a ladder of step sizes, log-log: against the ODE
# limit with the fitted power law C eta^p, and against the SDE (both with +-2 SE bars).
# Log-safe bars: a lower end 2 SE below the value that is <= 0 (the interval contains 0)
# cannot be drawn on a log axis; such a bar is drawn down to the lower edge of the plot and
# its point is drawn open, so no lower end is invented.
# The SDE gap is the largest of the noisy differences over the saved times, biased up by a
# few SE when the true gap is small (docs/compare.md).
# Usage: gnuplot -e "data='out/converge.csv'; json='out/converge.json'; out='out/converge'; title='...'" docs/figures/converge.gp
# Writes out.png and out.svg. data is the CSV of `amsgd converge` (columns eta, tau,
# weak_error, weak_error_sem, t_max, weak_error_sde, weak_error_sde_sem, diverged, fit);
# json (optional) is the --format json output of the same run, whose fitted "order" and
# its interval "order_ci" are shown in the key. The title should name the parameters.
if (!exists("data")) data = 'out/converge.csv'
if (!exists("out")) out = 'out/converge'
if (!exists("title")) title = 'Weak error as eta -> 0 (bars: +-2 SE; parameters not given: set title=...)'
fitname = 'fit C eta^p to the ODE gap'
if (exists("json")) {
    fit = system("tr -d ' \\n' < '".json."' | sed -n 's/.*\"order\":\\([-0-9.eE+]*\\),.*\"order_ci\":\\[\\([-0-9.eE+]*\\),\\([-0-9.eE+]*\\)\\].*/\\1 \\2 \\3/p'")
    if (words(fit) == 3) {
        fitname = sprintf('fit C eta^p to the ODE gap: p = %.3f, interval [%.3f, %.3f]', \
                          real(word(fit, 1)), real(word(fit, 2)), real(word(fit, 3)))
    } else {
        print sprintf("converge.gp: no \"order\" and \"order_ci\" in %s; the key shows no p", json)
    }
}
set datafile separator ','
stats data skip 1 using 1 nooutput
xlo = STATS_min / 1.5
xhi = STATS_max * 1.5
# the y range: every positive value and upper bar end, with room below the smallest
stats data skip 1 using ($3 > 0 ? $3 : 1/0) nooutput
ymin = STATS_min
stats data skip 1 using ($3 + 2*$4) nooutput
ymax = STATS_max
stats data skip 1 using ($6 > 0 ? $6 : 1/0) nooutput
ymin = STATS_min < ymin ? STATS_min : ymin
stats data skip 1 using ($6 + 2*$7) nooutput
ymax = STATS_max > ymax ? STATS_max : ymax
stats data skip 1 using (($3 - 2*$4 <= 0 || ($6 > 0 && $6 - 2*$7 <= 0)) ? 1 : 0) nooutput
nopen = STATS_sum
ybot = ymin / 4
ytop = ymax * 3
low(m, s) = (m - 2*s) > ybot ? m - 2*s : ybot
set key top left
set logscale xy
set format x '10^{%T}'
set format y '10^{%T}'
set xrange [xlo:xhi]
set yrange [ybot:ytop]
set xlabel 'step size eta'
set ylabel 'max_t |E err_{eta}(t) - err_{ref}(t)|,  ref = ODE or SDE'
set title title
set grid
if (nopen > 0) { set label 1 'open symbol, bar to the bottom edge: the lower end (value - 2 SE) is <= 0' at graph 0.98, graph 0.04 right font ',9' }
do for [fmt in 'png svg'] {
    if (fmt eq 'png') { set terminal pngcairo size 900,560 enhanced font 'Sans,11' }
    if (fmt eq 'svg') { set terminal svg size 900,560 fontscale 1.25 enhanced font 'Sans,11' background 'white' }
    set output out.'.'.fmt
    plot data skip 1 using 1:3:(low($3,$4)):($3+2*$4):xtic(sprintf('%g', $1)) with yerrorbars pt 7 lc rgb '#1f3b73' title 'discrete vs ODE', \
         data skip 1 using 1:($3-2*$4 > 0 ? 1/0 : $3) with points pt 7 ps 1.6 lc rgb '#ffffff' notitle, \
         data skip 1 using 1:($3-2*$4 > 0 ? 1/0 : $3) with points pt 6 ps 1.6 lc rgb '#1f3b73' notitle, \
         data skip 1 using 1:9 with lines lw 2 lc rgb '#c44e52' title fitname, \
         data skip 1 using 1:($6 > 0 ? $6 : 1/0):(low($6,$7)):($6+2*$7) with yerrorbars pt 5 lc rgb '#55a868' title 'discrete vs SDE (max of noisy gaps: biased up)', \
         data skip 1 using 1:($6 > 0 && $6-2*$7 <= 0 ? $6 : 1/0) with points pt 5 ps 1.2 lc rgb '#ffffff' notitle, \
         data skip 1 using 1:($6 > 0 && $6-2*$7 <= 0 ? $6 : 1/0) with points pt 4 ps 1.2 lc rgb '#55a868' notitle
}
