# staleness_dai2019.gp -- Dai et al.'s experiment on Fashion-MNIST (`amsgd staleness --preset
# dai2019`, SSP semantics): batches to the target test accuracy against the staleness bound
# s, normalised per seed by s = 0 (same model, optimiser, P and tuned step), one panel per
# worker count P (rows) and model (columns), one curve per optimiser. Filled markers with
# error bars: every seed reached the target (mean +- standard error over the seeds). Open
# markers: some seed did not reach it within the budget (or diverged); drawn at the lower bound
# normalized_lower (a miss counted as the whole budget). A cross at the top: no seed's s = 0
# run reached the target, so there is no reference. The s axis is categorical; the
# optimisers are shifted slightly sideways so that coinciding points stay visible.
# Data: staleness_dai2019.csv, staleness_dai2019_b.csv, _c.csv, _d.csv and _e.csv beside this
# script (read as one table; a file that is absent is skipped, a cell absent from all is not
# drawn; models and worker counts sorted), made by (docs/staleness.md)
#   amsgd staleness --preset dai2019 --models mlr,mlp1,mlp3 --optimizer sgd,momentum,adam \
#       --workers 1,4 --checkpoint staleness_dai2019.ckpt --resume -o staleness_dai2019.csv
#   amsgd staleness --preset dai2019 --models mlr,mlp1,mlp3 \
#       --optimizer nesterov,rmsprop,adagrad --workers 1 \
#       --checkpoint staleness_dai2019_b.ckpt --resume -o staleness_dai2019_b.csv
#   amsgd staleness --preset dai2019 --models mlr,mlp1 --optimizer sgd,momentum,adam \
#       --workers 2,8 --checkpoint staleness_dai2019_c.ckpt --resume -o staleness_dai2019_c.csv
#   amsgd staleness --preset dai2019 --models mlp2 --optimizer sgd,momentum,adam \
#       --workers 1,2,4,8 --checkpoint staleness_dai2019_d.ckpt --resume -o staleness_dai2019_d.csv
#   amsgd staleness --preset dai2019 --models mlp3 --optimizer sgd,momentum,adam \
#       --workers 2,8 --checkpoint staleness_dai2019_e.ckpt --resume -o staleness_dai2019_e.csv
# The worker trend at fixed s is drawn by staleness_dai2019_workers.gp from the same files.
# Render: cd docs/figures && gnuplot staleness_dai2019.gp   (writes staleness_dai2019.png)
set terminal pngcairo size 1900,1900 font ",10"
set output "staleness_dai2019.png"
set datafile separator ","
# the quoted network spec (it contains commas) is blanked before gnuplot splits the fields
files = system("for f in staleness_dai2019.csv staleness_dai2019_b.csv staleness_dai2019_c.csv staleness_dai2019_d.csv staleness_dai2019_e.csv; do [ -f $f ] && printf '%s ' $f; done")
both = "awk 'FNR > 1 || NR == 1' " . files . " | sed -e 's/\"[^\"]*\"//'"
f = "< " . both
strip = both . " | "
# models in the preset's order (mlr, mlp1, mlp2, mlp3, cnn), worker counts ascending
present = system(strip . "awk -F, 'NR > 1 && !seen[$1]++ { printf \"%s \", $1 }'")
allmodels = "mlr mlp1 mlp2 mlp3 cnn"
models = ""
do for [i = 1:words(allmodels)] { if (strstrt(" " . present, " " . word(allmodels, i) . " ") > 0) { models = models . word(allmodels, i) . " " } }
spec(m) = system("awk -F'\"' '$1 == \"" . m . ",\" { print $2; exit }' " . files)
workers = system(strip . "awk -F, 'NR > 1 && !seen[$4]++ { print $4 }' | sort -n | tr '\\n' ' '")
sv = system(strip . "awk -F, 'NR > 1 && !seen[$5]++ { print $5 }' | sort -n | tr '\\n' ' '")
seeds = system(strip . "awk -F, 'NR == 2 { print $8 }'")
if (!exists("budget")) budget = "4000"
nm = words(models)
nw = words(workers)
ns = words(sv)
# the optimisers present in the data; each keeps its colour and marker of the full list
allopts = "sgd momentum nesterov adam rmsprop adagrad"
opts = system(strip . "awk -F, 'NR > 1 && !seen[$3]++ { printf \"%s \", $3 }'")
no = words(opts)
oi(name) = sum [i = 1:6] (word(allopts, i) eq name ? i : 0)
pts = "7 5 9 11 13 15"
# legend entries only for what is drawn
npart = int(system(strip . "awk -F, 'NR > 1 && $9 < $8 && $22 != \"nan\" { n++ } END { print n + 0 }'"))
nnone = int(system(strip . "awk -F, 'NR > 1 && $22 == \"nan\" { n++ } END { print n + 0 }'"))
set linetype 1 lc rgb "#0072B2"
set linetype 2 lc rgb "#009E73"
set linetype 3 lc rgb "#D55E00"
set linetype 4 lc rgb "#CC79A7"
set linetype 5 lc rgb "#000000"
set linetype 6 lc rgb "#E69F00"
xi(s) = sum [i = 1:ns] (abs(s - word(sv, i)) < 1e-9 ? i - 1 : 0)
set xtics () font ",9"
do for [i = 1:ns] { set xtics add (word(sv, i) (i - 1)) }
set xrange [-0.5:ns - 0.5]
set logscale y
set yrange [0.3:200]
set ytics ("0.3" 0.3, "0.5" 0.5, "1" 1, "2" 2, "5" 5, "10" 10, "20" 20, "50" 50, "100" 100, "200" 200)
set grid ytics lc rgb "#e0e0e0"
dodge(j) = (j - (no + 1) / 2.0) * 0.08
# columns: 1 model, 3 optimizer, 4 workers, 5 s, 8 seeds, 9 reached, 12 normalized,
# 13 normalized_sem, 22 normalized_lower
sel(m, o, p) = strcol(1) eq m && strcol(3) eq o && column(4) == p
full(m, o, p, c) = (sel(m, o, p) && column(9) == column(8) ? column(c) : NaN)
part(m, o, p) = (sel(m, o, p) && column(9) < column(8) ? column(22) : NaN)
# no reference: no seed's s = 0 run reached the target (a cross at the top of the panel)
none(m, o, p) = (sel(m, o, p) && strcol(22) eq "nan" ? 150 : NaN)
set multiplot layout nw, nm margins 0.05, 0.99, 0.06, 0.94 spacing 0.04, 0.07 title sprintf("Fashion-MNIST, SSP, batch 32: batches to target / batches at s = 0 (mean +- SE over %s seeds; step tuned at s = 0 per model, optimiser and P; budget %s batches)", seeds, budget) font ",12"
do for [w = 1:nw] {
    do for [m = 1:nm] {
        set title sprintf("%s (%s), P = %s", word(models, m), spec(word(models, m)), word(workers, w))
        set xlabel (w == nw ? "staleness bound s (iterations; categorical axis)" : "")
        set ylabel (m == 1 ? "normalised batches to target" : "")
        if (w == 1 && m == 1) {
            set key top left inside samplen 1.5 spacing 0.9 font ",9" box opaque
        } else {
            unset key
        }
        P = word(workers, w) + 0
        M = word(models, m)
        plot for [j = 1:no] f using (xi($5) + dodge(j)):(full(M, word(opts, j), P, 12)):(full(M, word(opts, j), P, 13)) \
                with yerrorlines pt (word(pts, oi(word(opts, j))) + 0) ps 0.8 lw 1.3 lc oi(word(opts, j)) title word(opts, j), \
             for [j = 1:no] f using (xi($5) + dodge(j)):(part(M, word(opts, j), P)) \
                with points pt (word(pts, oi(word(opts, j))) - 1) ps 1.1 lw 1.3 lc oi(word(opts, j)) notitle, \
             for [j = 1:no] f using (xi($5) + dodge(j)):(none(M, word(opts, j), P)) \
                with points pt 2 ps 1.1 lw 1.3 lc oi(word(opts, j)) notitle, \
             NaN with points pt 6 ps 1.1 lw 1.3 lc rgb "black" title (npart > 0 ? "open: a seed missed (lower bound)" : ""), \
             NaN with points pt 2 ps 1.1 lw 1.3 lc rgb "black" title (nnone > 0 ? "x: no s = 0 run reached it" : ""), \
             1 with lines dt 3 lc rgb "#888888" notitle
    }
}
unset multiplot
