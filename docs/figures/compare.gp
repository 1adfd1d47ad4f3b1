# The three engines on one grid. Upper panel: mean error of the discrete ensemble (mc), of
# the global SDE ensemble (sde) and of the limit ODE, log y, with the stationary prediction
# of the OU limit when `pred` is given. Lower panel: the difference mc - sde on a linear y
# with its +-2 SE band (SE = sqrt(sem_mc^2 + sem_sde^2)): the agreement the figure is about;
# a band that contains 0 is agreement within the noise. Input: the CSV of `amsgd compare`
# (columns t, err_mc, err_mc_sem, err_sde, err_sde_sem, err_ode).
# Usage: gnuplot -e "data='compare.csv'; out='compare'; title='...'; pred=0.0173" compare.gp
# (writes .png and .svg; title and pred are optional: pred is the stationary error printed
# by `amsgd theory` with the same --mu and --eta, the title should name the parameters).
if (!exists("data")) data = 'compare.csv'
if (!exists("out")) out = 'compare'
if (!exists("title")) title = 'mc, sde and ode on one grid (parameters not given: set title=...)'
set datafile separator ','
set style fill transparent solid 0.30 noborder
lo(m, s) = (m - 2*s) > 1e-300 ? m - 2*s : 1e-300
se(a, b) = sqrt(a*a + b*b)
stats data skip 1 using 1 nooutput
tmax = STATS_max
do for [fmt in 'png svg'] {
    if (fmt eq 'png') { set terminal pngcairo size 900,820 enhanced font 'Sans,11' }
    if (fmt eq 'svg') { set terminal svg size 900,820 fontscale 1.25 enhanced font 'Sans,11' background 'white' }
    set output out.'.'.fmt
    set multiplot layout 2,1 title title
    # upper panel: the three paths
    set lmargin 12
    set key bottom left
    set logscale y
    set format y '10^{%T}'
    set xrange [0:tmax]
    set yrange [*:*]
    set xlabel 't = k eta'
    set ylabel 'mean error 1 - (v^1.v)^2/|v|^2'
    set grid
    if (exists("pred")) {
        plot data skip 1 using 1:(lo($2,$3)):($2+2*$3) with filledcurves lc rgb '#4c72b0' notitle, \
             data skip 1 using 1:2 with lines lw 2 lc rgb '#1f3b73' title 'mc (discrete ensemble, band +-2 SE)', \
             data skip 1 using 1:(lo($4,$5)):($4+2*$5) with filledcurves lc rgb '#dd8452' notitle, \
             data skip 1 using 1:4 with lines lw 2 dt 2 lc rgb '#a0522d' title 'sde (global, Euler-Maruyama, band +-2 SE)', \
             data skip 1 using 1:6 with lines lw 2 lc rgb '#2ca02c' title 'ode (CVODE, no noise)', \
             pred with lines lw 1.5 dt 4 lc rgb '#000000' title sprintf('stationary prediction (amsgd theory) %.4g', pred)
    } else {
        plot data skip 1 using 1:(lo($2,$3)):($2+2*$3) with filledcurves lc rgb '#4c72b0' notitle, \
             data skip 1 using 1:2 with lines lw 2 lc rgb '#1f3b73' title 'mc (discrete ensemble, band +-2 SE)', \
             data skip 1 using 1:(lo($4,$5)):($4+2*$5) with filledcurves lc rgb '#dd8452' notitle, \
             data skip 1 using 1:4 with lines lw 2 dt 2 lc rgb '#a0522d' title 'sde (global, Euler-Maruyama, band +-2 SE)', \
             data skip 1 using 1:6 with lines lw 2 lc rgb '#2ca02c' title 'ode (CVODE, no noise)'
    }
    # lower panel: the agreement mc - sde with its band
    unset logscale y
    set format y '%g'
    set yrange [*:*]
    set ylabel 'err_{mc} - err_{sde}'
    set key top right
    plot data skip 1 using 1:(($2-$4) - 2*se($3,$5)):(($2-$4) + 2*se($3,$5)) with filledcurves lc rgb '#8172b2' title '+-2 SE of the difference', \
         data skip 1 using 1:($2-$4) with lines lw 2 lc rgb '#4b3d8f' title 'mc - sde', \
         0 with lines lw 1 lc rgb '#000000' notitle
    unset multiplot
}
