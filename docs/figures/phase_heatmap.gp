# phase_heatmap.gp -- heat map of an `amsgd phase` CSV (metric over delay x momentum) with the
# theory overlays: linear-stability boundary, delay-equation boundary, the paper's law and,
# for geometric staleness, the implicit momentum 1 - 1/(MEAN + 1).
# The paper's bound C (1-mu)^2 / (lambda_1 eta^(1-gamma)) has an unknown constant C, so its
# curve is anchored at one measured point: the knee of the smallest momentum that has one on
# the map. As in `amsgd knee`, on the grid: the first simulated delay hi whose metric reaches
# twice that momentum's value at delay 0 or where more than 5 % of the replicas diverged, and
# the simulated delay lo before it bracket the knee, which is placed where the log ratio
# (interpolated linearly between lo and hi) reaches log 2, or the diverged fraction
# (linearly) 5 %, whichever comes first. Only its slope (1-mu)^2 is compared; without a knee
# on the map (or without delay 0 in the grid) it is not drawn, and a note says so.
# One cell per simulated (momentum, delay) pair, whatever the grid's spacing: rows and columns
# are the indices of the grid, labelled with their values, so no row is drawn that was not
# simulated. Overlays are mapped onto the index axes by piecewise-linear interpolation between
# neighbouring grid values. Cells where every replica diverged are hatched grey; cells where
# some diverged carry their diverged percentage.
# Usage: gnuplot -c docs/figures/phase_heatmap.gp phase.csv out.png|out.svg [title] [log|lin]
#            [colour-bar label] [x label]
in = ARG1
out = ARG2
title = (ARGC >= 3 ? ARG3 : "amsgd phase")
cblab = (ARGC >= 5 ? ARG5 : "metric")
xlab = (ARGC >= 6 ? ARG6 : "delay tau (steps)")
# the output format follows the file name: .svg writes SVG, anything else PNG
# (gnuplot substrings are 1-based: the last three characters start at strlen - 2)
if (strlen(out) > 4 && out[strlen(out)-2:] eq "svg") {
    set terminal svg size 960,680 fontscale 1.25 font ",11" noenhanced background "white"
    IMG = "image pixels"
} else {
    IMG = "image"
    set terminal pngcairo size 960,680 font ",11" noenhanced
}
set output out
set datafile separator ","
set title title
set xlabel xlab
set ylabel "momentum mu"
set cblabel cblab
if (ARGC >= 4 && ARG4 eq "log") { set logscale cb; set cbtics 2; set format cb "%.2g" }
# viridis (perceptually uniform), sampled at nine points
set palette defined (0 "#440154", 1 "#472d7b", 2 "#3b528b", 3 "#2c728e", 4 "#21918c", \
                     5 "#28ae80", 6 "#5ec962", 7 "#addc30", 8 "#fde725")

mus = system("tail -n +2 '".in."' | cut -d, -f1 | sort -u -g | tr '\n' ' '")
taus = system("tail -n +2 '".in."' | cut -d, -f2 | sort -u -g | tr '\n' ' '")
ny = words(mus)
nx = words(taus)
mv(i) = word(mus, i) + 0.0
tv(i) = word(taus, i) + 0.0
# index of a grid value (0-based)
iy(m) = sum [i = 1:ny] (abs(m - mv(i)) < 1e-9 ? i - 1 : 0)
ix(t) = sum [i = 1:nx] (abs(t - tv(i)) < 1e-9 ? i - 1 : 0)
# a value between grid values -> fractional index (linear between neighbours, linear beyond
# the ends with the end spacing)
dx1 = (nx > 1 ? tv(2) - tv(1) : 1)
dxn = (nx > 1 ? tv(nx) - tv(nx - 1) : 1)
dy1 = (ny > 1 ? mv(2) - mv(1) : 0.05)
dyn = (ny > 1 ? mv(ny) - mv(ny - 1) : 0.05)
colr(t, i) = (i >= nx) ? (nx - 1) + (t - tv(nx)) / dxn : \
             (t <= tv(i + 1) ? (i - 1) + (t - tv(i)) / (tv(i + 1) - tv(i)) : colr(t, i + 1))
col(t) = (t < tv(1)) ? (t - tv(1)) / dx1 : colr(t, 1)
rowr(m, i) = (i >= ny) ? (ny - 1) + (m - mv(ny)) / dyn : \
             (m <= mv(i + 1) ? (i - 1) + (m - mv(i)) / (mv(i + 1) - mv(i)) : rowr(m, i + 1))
row(m) = (m < mv(1)) ? (m - mv(1)) / dy1 : rowr(m, 1)

# tics: every row, every column (every k-th when there are many)
kx = (nx > 24 ? int(ceil(nx / 12.0)) : 1)
cmd = "set xtics ("
do for [i = 1:nx] { if ((i - 1) % kx == 0) { cmd = cmd . sprintf("\"%s\" %d,", word(taus, i), i - 1) } }
eval(cmd[1:strlen(cmd) - 1] . ")")
cmd = "set ytics ("
do for [i = 1:ny] { cmd = cmd . sprintf("\"%s\" %d,", word(mus, i), i - 1) }
eval(cmd[1:strlen(cmd) - 1] . ")")
set xtics scale 0
set ytics scale 0
set xrange [-0.5 : nx - 0.5]
set yrange [-0.5 : ny - 0.5]

finite(x) = (x == x && abs(x) < 1e300) ? x : 1/0
# which overlays and markers have anything to draw
count(cond) = int(system("awk -F, 'NR > 1 && (" . cond . ") { n++ } END { print n + 0 }' '".in."'"))
nall = count("$5 >= 1")
npart = count("$5 > 0 && $5 < 1")
has_implicit = (count("$9 == $9 + 0 && $9 != \"nan\"") > 0)
# fine-grid closed forms: delay equation pi (1-mu) / (2 eta a), its constant read from the
# first row (mu < 1), and the paper's law k (1-mu)^2 through the anchor (mu_a, tau_a)
kdde = real(system("awk -F, 'NR > 1 && $1 < 1 && $7 == $7 + 0 { print $7 / (1 - $1); exit }' '".in."'"))
# the anchor: per momentum the metric at delay 0 (B), the row of the first delay that is
# critical (K) and of the delay before it (P); for the smallest momentum with a critical
# delay the interpolated crossing x (log ratio to log 2, or diverged fraction to 0.05, the
# smaller) and its bracket lo, hi; "-1 -1 -1 -1" when there is none
anc = system("awk -F, 'NR > 1 { n++; M[n] = $1 + 0; T[n] = $2 + 0; V[n] = $3; D[n] = $5 + 0; " . \
             "if ($2 + 0 == 0 && $3 != \"nan\") B[$1 + 0] = $3 + 0 } " . \
             "END { for (i = 1; i <= n; i++) { m = M[i]; if (!(m in B) || T[i] <= 0) continue; " . \
             "c = D[i] > 0.05 || (V[i] != \"nan\" && V[i] + 0 >= 2 * B[m]); " . \
             "if (c && (!(m in K) || T[i] < T[K[m]])) K[m] = i } " . \
             "f = 0; for (m in K) if (m + 0 < 1 && (!f || m + 0 < best + 0)) { best = m; f = 1 } " . \
             "if (!f) { print -1, -1, -1, -1; exit } " . \
             "k = K[best]; p = 0; for (i = 1; i <= n; i++) " . \
             "if (M[i] == best + 0 && T[i] < T[k] && (!p || T[i] > T[p])) p = i; " . \
             "lo = T[p]; hi = T[k]; x = hi; rl = V[p] / B[best]; " . \
             "if (V[k] != \"nan\" && V[k] + 0 >= 2 * B[best]) { rh = V[k] / B[best]; " . \
             "x = lo + (hi - lo) * (rl > 0 ? log(2 / rl) / log(rh / rl) : (2 - rl) / (rh - rl)) } " . \
             "if (D[k] > 0.05 && D[p] <= 0.05) { td = lo + (hi - lo) * (0.05 - D[p]) / (D[k] - D[p]); " . \
             "if (td < x) x = td } " . \
             "printf \"%s %.17g %s %s\\n\", best, x, lo, hi }' '".in."'")
mua = real(word(anc, 1))
taua = real(word(anc, 2))
has_anchor = (mua >= 0 && mua < 1 && taua > 0)
kpap = (has_anchor ? taua / (1 - mua) ** 2 : 0)
# a curve is drawn (and in the key) only where it enters the map
mlo = mv(1) - 0.5 * dy1; mhi = mv(ny) + 0.5 * dyn
tlo = tv(1) - 0.5 * dx1; thi = tv(nx) + 0.5 * dxn
inmap(t, m) = (t >= tlo && t <= thi && m >= mlo && m <= mhi)
vis_dde = 0; vis_pap = 0; vis_lin = 0
do for [i = 0:400] {
    m = mlo + (mhi - mlo) * i / 400.0
    if (m < 1 && inmap(kdde * (1 - m), m)) { vis_dde = 1 }
    if (has_anchor && m < 1 && inmap(kpap * (1 - m) ** 2, m)) { vis_pap = 1 }
}
vis_lin = (count(sprintf("$6 >= %g && $6 <= %g", tlo, thi)) > 0)
note = ""
if (!vis_lin) { note = note . " linear-stability boundary beyond the map;" }
if (!vis_dde) { note = note . " delay-equation boundary beyond the map;" }
if (!has_anchor) { note = note . " paper law not drawn: no measured knee on the map to anchor it;" }
if (has_anchor && !vis_pap) { note = note . " paper law beyond the map;" }
if (strlen(note) > 0) {
    set label 1 "(" . note[2:strlen(note) - 1] . ")" at graph 0.5, graph -0.15 center font ",9"
}

set key bmargin horizontal center box opaque samplen 4 spacing 1.1 width -2 font ",10" maxrows 3
set bmargin 9
set xlabel offset 0, 0.3
set style fill solid 1.0 noborder
if (!(nall > 0 || npart > 0 || vis_lin || vis_dde || vis_pap || has_implicit)) { unset key }
set samples 400
# a curve with nothing to draw: one point far outside the map (keeps the plot list fixed)
off = -1e9
t0 = (tv(1) > 0 ? tv(1) : 0)
mf(t) = mlo + (mhi - mlo) * t
# cells: an image for a grid of at least 2 x 2 (no seams; in SVG drawn pixel by pixel, so a
# viewer that scales it does not smooth the cells together), boxes otherwise
if (nx >= 2 && ny >= 2) {
    CELLS = "in skip 1 using (ix($2)):(iy($1)):(finite($3)) with " . IMG . " notitle"
} else {
    CELLS = "in skip 1 using (ix($2)):(iy($1)):(0.5):(0.5):(finite($3)) with boxxy fs solid 1.0 noborder palette notitle"
}
plot @CELLS, \
     in using ($5 >= 1 ? ix($2) : 1/0):(iy($1)):(0.5):(0.5) with boxxy \
         fs pattern 4 border lc rgb "#999999" lc rgb "#bbbbbb" \
         title (nall > 0 ? "every replica diverged" : ""), \
     in using (ix($2)):(iy($1)):($5 > 0 && $5 < 1 ? sprintf("%.0f%%", 100 * $5) : "") \
         with labels font ",8" tc rgb "black" notitle, \
     [t = 0:1] '+' using (off):(off) with points pt 0 lc rgb "black" \
         title (npart > 0 ? "NN% = share of replicas diverged" : ""), \
     in using (inmap($6, $1) ? col($6) : 1/0):(iy($1)) with linespoints lw 2 pt 7 ps 0.9 \
         lc rgb "black" title (vis_lin ? "linear stability (per momentum)" : ""), \
     [t = 0:1] '+' using (vis_dde ? col(kdde * (1 - mf($1))) : off):(row(mf($1))) \
         with lines lw 2 dt 2 lc rgb "#e41a1c" \
         title (vis_dde ? "delay-equation boundary" : ""), \
     [t = 0:1] '+' using (vis_pap ? col(kpap * (1 - mf($1)) ** 2) : off):(row(mf($1))) \
         with lines lw 2 dt 4 lc rgb "#ff7f00" \
         title (vis_pap ? "paper law (1-mu)^2 through the square (slope only)" : ""), \
     [t = 0:1] '+' using (has_anchor ? col(taua) : off):(has_anchor ? row(mua) : off) every ::0::0 \
         with points pt 4 ps 2.2 lw 2.5 lc rgb "#ff7f00" \
         title (has_anchor ? sprintf("knee at mu = %g: tau = %.1f (error x2 or > 5%% div.)", mua, taua) : ""), \
     [t = 0:1] '+' using (has_implicit ? col(t0 + (thi - t0) * $1) : off):(row(1 - 1 / (t0 + (thi - t0) * $1 + 1))) \
         with lines lw 2 lc rgb "magenta" \
         title (has_implicit ? "implicit momentum 1 - 1/(mean + 1)" : "")
