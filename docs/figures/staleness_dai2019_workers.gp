# staleness_dai2019_workers.gp -- the worker trend of Dai et al.'s experiment on Fashion-MNIST
# (`amsgd staleness --preset dai2019`, SSP semantics), from the same tables as
# staleness_dai2019.gp: against the worker count P, one panel per model (columns) and row:
# the top row the batches to the target at s = 0 with the step tuned for that P (the
# reference of the normalisation; the dashed line is the budget), the other rows the
# batches to the target at s = 4 and s = 8 normalised per seed by s = 0 (same model,
# optimiser, P and tuned step). One curve per optimiser measured at more than one P (SGD,
# momentum, Adam). Filled markers with error bars: every seed reached the target (mean +-
# standard error over the seeds). Open markers: some seed did not reach it within the budget
# (or diverged); drawn at the lower bound normalized_lower (a miss counted as the whole
# budget). A cross at the top: no seed's s = 0 run reached the target. The P axis is
# categorical; the optimisers are shifted slightly sideways so that coinciding points stay
# visible. Data: staleness_dai2019.csv, _b, _c, _d, _e beside this script (the commands are
# in staleness_dai2019.gp and docs/staleness.md; absent files are skipped).
# Render: cd docs/figures && gnuplot staleness_dai2019_workers.gp
#   (writes staleness_dai2019_workers.png)
set terminal pngcairo size 1800,1250 font ",10"
set output "staleness_dai2019_workers.png"
set datafile separator ","
files = system("for f in staleness_dai2019.csv staleness_dai2019_b.csv staleness_dai2019_c.csv staleness_dai2019_d.csv staleness_dai2019_e.csv; do [ -f $f ] && printf '%s ' $f; done")
# the quoted network spec (it contains commas) is blanked before gnuplot splits the fields
# rows sorted by model, optimiser, s and P so that a curve's points are consecutive
both = "awk 'FNR > 1 || NR == 1' " . files . " | sed -e 's/\"[^\"]*\"//' | awk 'NR == 1 { print; next } { print | \"sort -t, -k1,1 -k3,3 -k5,5n -k4,4n\" }'"
f = "< " . both
strip = both . " | "
present = system(strip . "awk -F, 'NR > 1 && !seen[$1]++ { printf \"%s \", $1 }'")
allmodels = "mlr mlp1 mlp2 mlp3 cnn"
models = ""
do for [i = 1:words(allmodels)] { if (strstrt(" " . present, " " . word(allmodels, i) . " ") > 0) { models = models . word(allmodels, i) . " " } }
spec(m) = system("awk -F'\"' '$1 == \"" . m . ",\" { print $2; exit }' " . files)
workers = system(strip . "awk -F, 'NR > 1 && !seen[$4]++ { print $4 }' | sort -n | tr '\\n' ' '")
seeds = system(strip . "awk -F, 'NR == 2 { print $8 }'")
if (!exists("budget")) budget = "4000"
# the optimisers measured at more than one worker count, in the order of the full list
allopts = "sgd momentum nesterov adam rmsprop adagrad"
multi = system(strip . "awk -F, 'NR > 1 && !seen[$3 \",\" $4]++ { n[$3]++ } END { for (o in n) if (n[o] > 1) printf \"%s \", o }'")
opts = ""
do for [i = 1:6] { if (strstrt(" " . multi, " " . word(allopts, i) . " ") > 0) { opts = opts . word(allopts, i) . " " } }
nm = words(models)
nw = words(workers)
no = words(opts)
oi(name) = sum [i = 1:6] (word(allopts, i) eq name ? i : 0)
pts = "7 5 9 11 13 15"
set linetype 1 lc rgb "#0072B2"
set linetype 2 lc rgb "#009E73"
set linetype 3 lc rgb "#D55E00"
set linetype 4 lc rgb "#CC79A7"
set linetype 5 lc rgb "#000000"
set linetype 6 lc rgb "#E69F00"
xi(p) = sum [i = 1:nw] (abs(p - word(workers, i)) < 1e-9 ? i - 1 : 0)
set xtics () font ",9"
do for [i = 1:nw] { set xtics add (word(workers, i) (i - 1)) }
set xrange [-0.5:nw - 0.5]
set logscale y
set grid ytics lc rgb "#e0e0e0"
dodge(j) = (j - (no + 1) / 2.0) * 0.08
# columns: 1 model, 3 optimizer, 4 workers, 5 s, 8 seeds, 9 reached, 10 steps_to_target,
# 11 steps_to_target_sem, 12 normalized, 13 normalized_sem, 22 normalized_lower
sel(m, o, s) = strcol(1) eq m && strcol(3) eq o && abs(column(5) - s) < 1e-9
full(m, o, s, c) = (sel(m, o, s) && column(9) == column(8) ? column(c) : NaN)
part(m, o, s) = (sel(m, o, s) && column(9) < column(8) ? column(22) : NaN)
none(m, o, s) = (sel(m, o, s) && strcol(22) eq "nan" ? 150 : NaN)
# s = 0 with some seed missing: the mean over all seeds with a miss counted as the budget
# is not in the table, so such a point is drawn open at the budget
part0(m, o) = (sel(m, o, 0) && column(9) < column(8) ? budget + 0 : NaN)
npart = int(system(strip . "awk -F, 'NR > 1 && ($5 == 4 || $5 == 8) && $9 < $8 && $22 != \"nan\" { n++ } END { print n + 0 }'"))
nnone = int(system(strip . "awk -F, 'NR > 1 && ($5 == 4 || $5 == 8) && $22 == \"nan\" { n++ } END { print n + 0 }'"))
npart0 = int(system(strip . "awk -F, 'NR > 1 && $5 == 0 && $9 < $8 { n++ } END { print n + 0 }'"))
set multiplot layout 3, nm margins 0.05, 0.99, 0.06, 0.93 spacing 0.035, 0.07 title sprintf("Fashion-MNIST, SSP, batch 32: the worker trend (mean +- SE over %s seeds; step tuned at s = 0 per model, optimiser and P; budget %s batches; P axis categorical)", seeds, budget) font ",12"
do for [r = 1:3] {
    S = (r == 1 ? 0 : (r == 2 ? 4 : 8))
    do for [m = 1:nm] {
        M = word(models, m)
        set xlabel (r == 3 ? "worker count P" : "")
        if (r == 1) {
            set title sprintf("%s (%s): batches to target at s = 0", M, spec(M))
            set ylabel (m == 1 ? "batches to target at s = 0" : "")
            set yrange [100:6000]
            set ytics ("100" 100, "200" 200, "500" 500, "1000" 1000, "2000" 2000, "4000" 4000)
        } else {
            set title sprintf("%s (%s): s = %d, normalised by s = 0", M, spec(M), S)
            set ylabel (m == 1 ? sprintf("normalised batches to target, s = %d", S) : "")
            set yrange [0.5:200]
            set ytics ("0.5" 0.5, "1" 1, "2" 2, "5" 5, "10" 10, "20" 20, "50" 50, "100" 100, "200" 200)
        }
        if (m == 1 && r <= 2) {
            set key top left inside samplen 1.5 spacing 0.9 width 1 font ",9" box opaque
        } else {
            unset key
        }
        if (r == 1) {
            plot for [j = 1:no] f using (xi($4) + dodge(j)):(full(M, word(opts, j), 0, 10)):(full(M, word(opts, j), 0, 11)) \
                    with yerrorlines pt (word(pts, oi(word(opts, j))) + 0) ps 0.8 lw 1.3 lc oi(word(opts, j)) title word(opts, j), \
                 for [j = 1:no] f using (xi($4) + dodge(j)):(part0(M, word(opts, j))) \
                    with points pt (word(pts, oi(word(opts, j))) - 1) ps 1.1 lw 1.3 lc oi(word(opts, j)) notitle, \
                 NaN with points pt 6 ps 1.1 lw 1.3 lc rgb "black" title (npart0 > 0 ? "open: a seed missed (at the budget)" : ""), \
                 budget + 0 with lines dt 2 lc rgb "#888888" title (m == 1 ? "budget" : "")
        } else {
            plot for [j = 1:no] f using (xi($4) + dodge(j)):(full(M, word(opts, j), S, 12)):(full(M, word(opts, j), S, 13)) \
                    with yerrorlines pt (word(pts, oi(word(opts, j))) + 0) ps 0.8 lw 1.3 lc oi(word(opts, j)) title (r == 2 ? "" : word(opts, j)), \
                 for [j = 1:no] f using (xi($4) + dodge(j)):(part(M, word(opts, j), S)) \
                    with points pt (word(pts, oi(word(opts, j))) - 1) ps 1.1 lw 1.3 lc oi(word(opts, j)) notitle, \
                 for [j = 1:no] f using (xi($4) + dodge(j)):(none(M, word(opts, j), S)) \
                    with points pt 2 ps 1.1 lw 1.3 lc oi(word(opts, j)) notitle, \
                 NaN with points pt 6 ps 1.1 lw 1.3 lc rgb "black" title (npart > 0 ? "open: a seed missed (lower bound)" : ""), \
                 NaN with points pt 2 ps 1.1 lw 1.3 lc rgb "black" title (nnone > 0 ? "x: no s = 0 run reached it" : ""), \
                 1 with lines dt 3 lc rgb "#888888" notitle
        }
    }
}
unset multiplot
