# staleness_dai2019.gp -- Dai et al.'s experiment on Fashion-MNIST (`amsgd staleness --preset
# dai2019`, SSP semantics) with one worker (P = 1): the slowdown from staleness, i.e. the
# batches to the target test accuracy at the staleness bound s divided per seed by those at
# s = 0 (same model, optimiser and step, the step tuned at s = 0 per model and optimiser).
# One panel per optimiser (top row SGD, momentum, Nesterov; bottom row the adaptive Adam,
# RMSProp, Adagrad), all on the same axes; in each a curve per model, coloured from light
# (mlr, no hidden layer) to dark (mlp3, three hidden layers), so "deeper is more sensitive"
# reads as the dark curves rising above the light ones. Filled markers with error bars:
# every seed reached the target (mean +- standard error over the seeds), joined by lines.
# Open markers with an upward arrow: censored, some seed did not reach the target within the
# budget (or diverged), so only a lower bound is known: normalized_lower, a miss counted as
# the whole budget (the cell's true slowdown is at least this). Cells whose s = 0 runs never
# reached the target have no reference and are left out (a note says how many). The s axis
# is categorical; the models are shifted slightly sideways so that coinciding points stay
# visible. The P = 2, 4, 8 rows are drawn against P by staleness_dai2019_workers.gp and
# tabulated in docs/staleness.md.
# Data: staleness_dai2019.csv, staleness_dai2019_b.csv, _c.csv, _d.csv and _e.csv beside this
# script (read as one table; a file that is absent is skipped, a cell absent from all is not
# drawn), made by (docs/staleness.md)
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
# Render: cd docs/figures && gnuplot staleness_dai2019.gp
#   (writes staleness_dai2019.png and staleness_dai2019.svg; -e "budget=N" for another
#   --max-batches than the preset's 4000, which is not in the CSV)
if (!exists("budget")) budget = 4000
PW = 1
files = system("for f in staleness_dai2019.csv staleness_dai2019_b.csv staleness_dai2019_c.csv staleness_dai2019_d.csv staleness_dai2019_e.csv; do [ -f $f ] && printf '%s ' $f; done")
# One table of the runs with P = 1, whitespace-separated, a curve's rows consecutive (sorted
# by model, optimiser and s); the quoted network spec (it contains commas) is blanked first.
# Columns: 1 model, 2 optimiser, 3 P, 4 s, 5 step, 6 kind (m: every seed reached the target,
# c: censored, x: no reference), 7 value (m: normalized, c: normalized_lower), 8 its
# standard error (m only), 9 the s of the previous point of the curve if that point is
# measured (else NaN), 10 its value.
table = "awk 'FNR > 1' " . files . " | sed -e 's/\"[^\"]*\"//' | " . \
        sprintf("awk -F, '$4 == %d' | sort -t, -k1,1 -k3,3 -k5,5n | ", PW) . \
        "awk -F, '{ k = ($9 == $8) ? \"m\" : ($22 == \"nan\" ? \"x\" : \"c\"); " . \
        "y = (k == \"m\") ? $12 : (k == \"c\" ? $22 : \"NaN\"); " . \
        "e = (k == \"m\" && $13 != \"nan\") ? $13 : 0; " . \
        "c = $1 \",\" $3; px = \"NaN\"; py = \"NaN\"; " . \
        "if (c == pc && pk == \"m\") { px = ps; py = pyv } " . \
        "print $1, $3, $4, $5, $7, k, y, e, px, py; pc = c; pk = k; ps = $5; pyv = y }'"
f = "< " . table
# models in the preset's order (mlr, mlp1, mlp2, mlp3, cnn) and the s grid of the data
present = system(table . " | awk '!seen[$1]++ { printf \"%s \", $1 }'")
allmodels = "mlr mlp1 mlp2 mlp3 cnn"
models = ""
do for [i = 1:words(allmodels)] { if (strstrt(" " . present, " " . word(allmodels, i) . " ") > 0) { models = models . word(allmodels, i) . " " } }
nm = words(models)
sv = system(table . " | awk '!seen[$4]++ { print $4 }' | sort -n | tr '\\n' ' '")
ns = words(sv)
seeds = system("awk -F, 'FNR == 2 { print $8; exit }' " . files)
nnone = int(system(table . " | awk '$6 == \"x\" { n++ } END { print n + 0 }'"))
ncens = int(system(table . " | awk '$6 == \"c\" { n++ } END { print n + 0 }'"))
# the y range: every bar end and every censored arrow tip, with a margin
ytop = real(system(table . " | awk '$6 == \"m\" && $7 + $8 > t { t = $7 + $8 } $6 == \"c\" && 1.45 * $7 > t { t = 1.45 * $7 } END { print t + 0 }'")) * 1.12
# hidden layers and labels of the models, colour and marker of each (filled; the open twin
# for censored cells is pt - 1), from light (no hidden layer) to dark (three)
mlabel(m) = (m eq "mlr" ? "mlr (no hidden layer)" : (m eq "mlp1" ? "mlp1 (1 hidden layer)" : \
            (m eq "mlp2" ? "mlp2 (2 hidden layers)" : (m eq "mlp3" ? "mlp3 (3 hidden layers)" : m))))
mi(m) = sum [i = 1:5] (word(allmodels, i) eq m ? i : 0)
cols = "#F0A030 #D6456B #8B1FA0 #1B0C6B #000000"
pts = "7 5 13 15 9"
mcol(m) = word(cols, mi(m))
mpt(m) = word(pts, mi(m)) + 0
# the panels: optimisers in this order, those present
allopts = "sgd momentum nesterov adam rmsprop adagrad"
onames = "SGD 'momentum (mu = 0.9)' 'Nesterov (mu = 0.9)' Adam RMSProp Adagrad"
presento = system(table . " | awk '!seen[$2]++ { printf \"%s \", $2 }'")
opts = ""
do for [i = 1:6] { if (strstrt(" " . presento, " " . word(allopts, i) . " ") > 0) { opts = opts . word(allopts, i) . " " } }
no = words(opts)
oname(o) = word(onames, sum [i = 1:6] (word(allopts, i) eq o ? i : 0))
# the models absent from one optimiser's panel (named in its title)
absent(o) = system(table . sprintf(" | awk '$2 == \"%s\" { h[$1] = 1 } END { n = split(\"%s\", a, \" \"); for (i = 1; i <= n; i++) if (!(a[i] in h)) printf \"%%s \", a[i] }'", o, models))
xi(s) = sum [i = 1:ns] (abs(s - word(sv, i)) < 1e-9 ? i - 1 : 0)
dodge(j) = (j - (nm + 1) / 2.0) * 0.09
sel(m, o) = strcol(1) eq m && strcol(2) eq o
meas(m, o) = (sel(m, o) && strcol(6) eq "m" ? column(7) : NaN)
cens(m, o) = (sel(m, o) && strcol(6) eq "c" ? column(7) : NaN)
# a segment from the previous measured point to this measured one
segok(m, o) = sel(m, o) && strcol(6) eq "m" && column(10) == column(10)
ncols = 3
nrows = int(ceil(no / 3.0))
# the canvas in pixels: a title band on top, the panels (each placed by its margins), the x
# labels and the two keys below (drawn by two empty plots as wide as the canvas)
W = 1140
PH = 300
top = 100
gapy = 95
bot = 170
H = top + nrows * PH + (nrows - 1) * gapy + bot
left = 85
right = 15
gapx = 60
PW = (W - left - right - (ncols - 1) * gapx) / ncols
# the margins below are fractions of the canvas: floating-point division
Wf = W * 1.0
Hf = H * 1.0
do for [fmt in "png svg"] {
    if (fmt eq "png") { set terminal pngcairo size W, H font ",12" }
    if (fmt eq "svg") { set terminal svg size W, H fontscale 1.25 font ",12" background "white" }
    set output "staleness_dai2019." . fmt
    # the SVG terminal draws the markers larger than pngcairo
    PS = (fmt eq "svg" ? 0.75 : 1.0)
    set datafile separator whitespace
    set multiplot title sprintf("Fashion-MNIST, SSP, one worker (P = 1), batch 32: slowdown from staleness, per optimiser (panels)\nand model depth (colours; %s seeds, step tuned at s = 0 per model and optimiser, budget %d batches)", seeds, budget) \
        font ",13"
    set logscale y
    set yrange [0.8 : ytop]
    set ytics ("1" 1, "2" 2, "3" 3, "5" 5, "10" 10, "20" 20, "30" 30, "50" 50)
    set grid ytics lc rgb "#e4e4e4"
    set xrange [-0.5 : ns - 0.5]
    set xtics () scale 0
    do for [i = 1:ns] { set xtics add (word(sv, i) (i - 1)) }
    set border 3
    set tics nomirror
    unset key
    do for [p = 1:no] {
        O = word(opts, p)
        c = (p - 1) % ncols
        r = (p - 1) / ncols
        set lmargin at screen (left + c * (PW + gapx)) / Wf
        set rmargin at screen (left + c * (PW + gapx) + PW) / Wf
        set tmargin at screen 1 - (top + r * (PH + gapy)) / Hf
        set bmargin at screen 1 - (top + r * (PH + gapy) + PH) / Hf
        ab = absent(O)
        set title (strlen(ab) > 0 ? sprintf("%s  (no %s run)", oname(O), ab[1:strlen(ab) - 1]) : oname(O)) font ",13"
        set xlabel (p > no - ncols ? "staleness bound s (iterations)" : "")
        set ylabel (c == 0 ? "slowdown (batches at s / at s = 0)" : "")
        plot 1 with lines dt 3 lw 1.5 lc rgb "#888888", \
             for [j = 1:nm] f using (xi(column(9)) + dodge(j)):(segok(word(models, j), O) ? column(10) : NaN):(xi(column(4)) - xi(column(9))):(column(7) - column(10)) \
                with vectors nohead lw 2.2 lc rgb mcol(word(models, j)), \
             for [j = 1:nm] f using (xi(column(4)) + dodge(j)):(meas(word(models, j), O)):(column(8)) \
                with yerrorbars pt mpt(word(models, j)) ps 1.4 * PS lw 1.5 lc rgb mcol(word(models, j)), \
             for [j = 1:nm] f using (xi(column(4)) + dodge(j)):(cens(word(models, j), O)):(0):(0.38 * cens(word(models, j), O)) \
                with vectors head filled size screen 0.006, 25, 60 lw 1.2 lc rgb mcol(word(models, j)), \
             for [j = 1:nm] f using (xi(column(4)) + dodge(j)):(cens(word(models, j), O)) \
                with points pt mpt(word(models, j)) - 1 ps 1.1 * PS lw 1.3 lc rgb mcol(word(models, j))
    }
    if (nnone > 0) {
        set label 1 sprintf("%d cells without a reference (no s = 0 run reached the target) left out", nnone) at screen 0.5, screen 12.0 / H center font ",11"
    }
    # the keys: empty plots over the band below the panels
    unset title
    unset xlabel
    unset ylabel
    unset border
    unset tics
    unset grid
    unset logscale y
    set xrange [0:1]
    set yrange [0:1]
    set lmargin at screen 0.0
    set rmargin at screen 1.0
    set bmargin at screen 0.0
    set tmargin at screen 100.0 / Hf
    set key at screen 0.5, screen 100.0 / H center top horizontal maxrows 1 samplen 2 spacing 1.2 width 1 box opaque font ",12"
    plot for [j = 1:nm] NaN with linespoints pt mpt(word(models, j)) ps 1.4 * PS lw 2.2 lc rgb mcol(word(models, j)) title mlabel(word(models, j))
    unset label 1
    set key at screen 0.5, screen 58.0 / H center top vertical maxrows 2 samplen 1 spacing 1.2 width 1 box opaque font ",12"
    plot NaN with points pt 7 ps 1.4 * PS lc rgb "#444444" \
            title sprintf("filled, joined: every seed reached the target (bars: +-1 SE over %s seeds)", seeds), \
         NaN with points pt 6 ps 1.1 * PS lw 1.3 lc rgb "#444444" \
            title (ncens > 0 ? sprintf("open, arrow up: censored, a seed missed the %d-batch budget: at least this", budget) : "")
    unset multiplot
}
