# The three engines on one grid: discrete ensemble (mc) and global SDE ensemble (sde) with
# +-2 SE bands, and the limit ODE. Input: the CSV of `amsgd compare` (columns t, err_mc,
# err_mc_sem, err_sde, err_sde_sem, err_ode).
# Usage: gnuplot -e "data='compare.csv'; out='compare'" compare.gp   (writes .png and .svg)
if (!exists("data")) data = 'compare.csv'
if (!exists("out")) out = 'compare'
if (!exists("title")) title = 'mc, sde and ode on one grid (bands: +-2 SE)'
set datafile separator ','
set key top right
set logscale y
set format y '10^{%T}'
set xlabel 't = k eta'
set ylabel 'mean error 1 - (v^1.v)^2/|v|^2'
set title title
set grid
set style fill transparent solid 0.25 noborder
lo(m, s) = (m - 2*s) > 1e-300 ? m - 2*s : 1e-300
do for [fmt in 'png svg'] {
    if (fmt eq 'png') { set terminal pngcairo size 900,560 enhanced font 'Sans,11' }
    if (fmt eq 'svg') { set terminal svg size 900,560 enhanced font 'Sans,11' }
    set output out.'.'.fmt
    plot data skip 1 using 1:(lo($2,$3)):($2+2*$3) with filledcurves lc rgb '#4c72b0' notitle, \
         data skip 1 using 1:2 with lines lw 2 lc rgb '#1f3b73' title 'mc (discrete ensemble)', \
         data skip 1 using 1:(lo($4,$5)):($4+2*$5) with filledcurves lc rgb '#dd8452' notitle, \
         data skip 1 using 1:4 with lines lw 2 dt 2 lc rgb '#a0522d' title 'sde (global, Euler-Maruyama)', \
         data skip 1 using 1:6 with lines lw 2 lc rgb '#2ca02c' title 'ode (CVODE)'
}
