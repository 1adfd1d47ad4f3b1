# staleness_dai2019_workers.gp -- the worker trend of Dai et al.'s experiment on Fashion-MNIST
# (`amsgd staleness --preset dai2019`, SSP semantics), from the same tables as
# staleness_dai2019.gp: against the worker count P, one column per optimiser measured at more
# than one P (SGD, momentum, Adam) and three rows: on top the batches to the target at s = 0
# with the step tuned for that P (the reference of the normalisation; the dashed line is the
# budget), below the slowdown at s = 4 and at s = 8 (batches to target divided per seed by
# those at s = 0; same model, optimiser, P and tuned step). In each panel a curve per model,
# coloured as in staleness_dai2019.gp from light (mlr, no hidden layer) to dark (mlp3).
# Filled markers with error bars: every seed reached the target (mean +- standard error over
# the seeds). Open markers with an upward arrow: censored, some seed did not reach the target
# within the budget (or diverged): drawn at the lower bound normalized_lower (a miss counted as
# the whole budget; at s = 0 at the budget). Since the reference grows with P, the largest
# slowdown the budget can resolve, budget / (batches at s = 0), falls with P: the censored
# markers sit lower at larger P because of that, not because the slowdown is smaller.
# Neighbouring worker counts whose points are both measured are joined by a solid line when
# the tuning chose the same step at both, by a dotted line when it chose another (the
# comparison is then one of steps as much as of P). The P axis is categorical; the models are
# shifted slightly sideways so that coinciding points stay visible. Cells whose s = 0 runs
# never reached the target have no reference and are left out (a note says how many).
# Data: staleness_dai2019.csv, _b, _c, _d, _e beside this script (the commands are in
# staleness_dai2019.gp and docs/staleness.md; absent files are skipped).
# Render: cd docs/figures && gnuplot staleness_dai2019_workers.gp
#   (writes staleness_dai2019_workers.png and staleness_dai2019_workers.svg; -e "budget=N"
#   for another --max-batches than the preset's 4000, which is not in the CSV)
if (!exists("budget")) budget = 4000
files = system("for f in staleness_dai2019.csv staleness_dai2019_b.csv staleness_dai2019_c.csv staleness_dai2019_d.csv staleness_dai2019_e.csv; do [ -f $f ] && printf '%s ' $f; done")
# One table of the runs, whitespace-separated, a curve's rows consecutive (sorted by model,
# optimiser, s and P); the quoted network spec (it contains commas) is blanked first.
# Columns: 1 model, 2 optimiser, 3 P, 4 s, 5 step, 6 kind (m: every seed reached the target,
# c: censored, x: no reference), 7 value (m: normalized, c: normalized_lower), 8 its
# standard error (m only), 9 the P of the previous point of the curve if that point is
# measured (else NaN), 10 its value, 11 1 if that point had the same step (else 0), 12 the
# batches to target (the budget if a seed missed), 13 their standard error (0 if a seed
# missed), 14 the P of the previous point if every seed reached the target there (else NaN),
# 15 its batches.
table = "awk 'FNR > 1' " . files . " | sed -e 's/\"[^\"]*\"//' | sort -t, -k1,1 -k3,3 -k5,5n -k4,4n | " . \
        sprintf("awk -F, -v B=%d ", budget) . \
        "'{ k = ($9 == $8) ? \"m\" : ($22 == \"nan\" ? \"x\" : \"c\"); " . \
        "y = (k == \"m\") ? $12 : (k == \"c\" ? $22 : \"NaN\"); " . \
        "e = (k == \"m\" && $13 != \"nan\") ? $13 : 0; " . \
        "b = ($9 == $8) ? $10 : B; be = ($9 == $8 && $11 != \"nan\") ? $11 : 0; " . \
        "c = $1 \",\" $3 \",\" $5; px = \"NaN\"; py = \"NaN\"; same = 0; qx = \"NaN\"; qb = \"NaN\"; " . \
        "if (c == pc) { if (pk == \"m\") { px = pp; py = pyv; same = ($7 == plr) } if (pall) { qx = pp; qb = pb } } " . \
        "print $1, $3, $4, $5, $7, k, y, e, px, py, same, b, be, qx, qb; " . \
        "pc = c; pk = k; pp = $4; pyv = y; plr = $7; pall = ($9 == $8); pb = b }'"
f = "< " . table
present = system(table . " | awk '!seen[$1]++ { printf \"%s \", $1 }'")
allmodels = "mlr mlp1 mlp2 mlp3 cnn"
models = ""
do for [i = 1:words(allmodels)] { if (strstrt(" " . present, " " . word(allmodels, i) . " ") > 0) { models = models . word(allmodels, i) . " " } }
nm = words(models)
workers = system(table . " | awk '!seen[$3]++ { print $3 }' | sort -n | tr '\\n' ' '")
nw = words(workers)
seeds = system("awk -F, 'FNR == 2 { print $8; exit }' " . files)
# the optimisers measured at more than one worker count, in the order of the full list
allopts = "sgd momentum nesterov adam rmsprop adagrad"
onames = "SGD momentum Nesterov Adam RMSProp Adagrad"
multi = system(table . " | awk '!seen[$2 \",\" $3]++ { n[$2]++ } END { for (o in n) if (n[o] > 1) printf \"%s \", o }'")
opts = ""
do for [i = 1:6] { if (strstrt(" " . multi, " " . word(allopts, i) . " ") > 0) { opts = opts . word(allopts, i) . " " } }
no = words(opts)
oname(o) = word(onames, sum [i = 1:6] (word(allopts, i) eq o ? i : 0))
# the rows: s = 0 (batches), then the slowdown at these s
svals = "0 4 8"
nrows = words(svals)
inopts(o) = strstrt(" " . opts, " " . o . " ") > 0
count(cond) = int(system(table . " | awk '(" . cond . ") { n++ } END { print n + 0 }'"))
nnone = count("$6 == \"x\" && ($4 == 4 || $4 == 8)")
ncens = count("$6 == \"c\" && ($4 == 4 || $4 == 8)")
ncens0 = count("$4 == 0 && $12 == " . budget)
nretune = count("$9 == $9 + 0 && $11 == 0 && ($4 == 0 || $4 == 4 || $4 == 8)")
# y ranges: batches at s = 0 (with the budget), and one range for the slowdown rows
blo = real(system(table . " | awk '$4 == 0 && (t == \"\" || $12 - $13 < t) { t = $12 - $13 } END { print t + 0 }'")) / 1.3
bhi = budget * 1.35
ytop = real(system(table . " | awk '($4 == 4 || $4 == 8) && $6 == \"m\" && $7 + $8 > t { t = $7 + $8 } ($4 == 4 || $4 == 8) && $6 == \"c\" && 1.45 * $7 > t { t = 1.45 * $7 } END { print t + 0 }'")) * 1.12
mlabel(m) = (m eq "mlr" ? "mlr (no hidden layer)" : (m eq "mlp1" ? "mlp1 (1 hidden layer)" : \
            (m eq "mlp2" ? "mlp2 (2 hidden layers)" : (m eq "mlp3" ? "mlp3 (3 hidden layers)" : m))))
mi(m) = sum [i = 1:5] (word(allmodels, i) eq m ? i : 0)
cols = "#F0A030 #D6456B #8B1FA0 #1B0C6B #000000"
pts = "7 5 13 15 9"
mcol(m) = word(cols, mi(m))
mpt(m) = word(pts, mi(m)) + 0
xi(p) = sum [i = 1:nw] (abs(p - word(workers, i)) < 1e-9 ? i - 1 : 0)
dodge(j) = (j - (nm + 1) / 2.0) * 0.08
sel(m, o, s) = strcol(1) eq m && strcol(2) eq o && abs(column(4) - s) < 1e-9
meas(m, o, s) = (sel(m, o, s) && strcol(6) eq "m" ? column(7) : NaN)
cens(m, o, s) = (sel(m, o, s) && strcol(6) eq "c" ? column(7) : NaN)
# segments from the previous measured point: same step (solid) or another (dotted)
seg(m, o, s, same) = (sel(m, o, s) && strcol(6) eq "m" && column(10) == column(10) && column(11) == same ? column(10) : NaN)
# the s = 0 row: batches, open at the budget where a seed missed
bm(m, o) = (sel(m, o, 0) && column(12) < budget ? column(12) : NaN)
bc(m, o) = (sel(m, o, 0) && column(12) >= budget ? column(12) : NaN)
bseg(m, o, same) = (sel(m, o, 0) && column(12) < budget && column(15) == column(15) && column(15) < budget && column(11) == same ? column(15) : NaN)
W = 1140
PH = 250
top = 100
gapy = 90
bot = 225
H = top + nrows * PH + (nrows - 1) * gapy + bot
left = 90
right = 15
gapx = 65
PW = (W - left - right - (no - 1) * gapx) / no
Wf = W * 1.0
Hf = H * 1.0
do for [fmt in "png svg"] {
    if (fmt eq "png") { set terminal pngcairo size W, H font ",12" }
    if (fmt eq "svg") { set terminal svg size W, H fontscale 1.25 font ",12" background "white" }
    set output "staleness_dai2019_workers." . fmt
    # the SVG terminal draws the markers larger than pngcairo
    PS = (fmt eq "svg" ? 0.75 : 1.0)
    set datafile separator whitespace
    set multiplot title sprintf("Fashion-MNIST, SSP, batch 32: the worker trend, per optimiser (columns) and model depth (colours)\n%s seeds; the step tuned at s = 0 for each model, optimiser and P; budget %d batches", seeds, budget) \
        font ",13"
    set logscale y
    set grid ytics lc rgb "#e4e4e4"
    set xrange [-0.5 : nw - 0.5]
    set xtics () scale 0
    do for [i = 1:nw] { set xtics add (word(workers, i) (i - 1)) }
    set border 3
    set tics nomirror
    unset key
    do for [r = 1:nrows] {
        S = word(svals, r) + 0
        do for [c = 1:no] {
            O = word(opts, c)
            set lmargin at screen (left + (c - 1) * (PW + gapx)) / Wf
            set rmargin at screen (left + (c - 1) * (PW + gapx) + PW) / Wf
            set tmargin at screen 1 - (top + (r - 1) * (PH + gapy)) / Hf
            set bmargin at screen 1 - (top + (r - 1) * (PH + gapy) + PH) / Hf
            set xlabel (r == nrows ? "workers P" : "")
            if (S == 0) {
                set title sprintf("%s: batches to target at s = 0", oname(O)) font ",13"
                set ylabel (c == 1 ? "batches to target at s = 0" : "")
                set yrange [blo : bhi]
                set ytics ("100" 100, "200" 200, "300" 300, "500" 500, "1000" 1000, "2000" 2000, "4000" 4000)
                plot budget with lines dt 4 lw 1.5 lc rgb "#888888", \
                     for [j = 1:nm] f using (xi(column(14)) + dodge(j)):(bseg(word(models, j), O, 1)):(xi(column(3)) - xi(column(14))):(column(12) - column(15)) \
                        with vectors nohead lw 2.2 lc rgb mcol(word(models, j)), \
                     for [j = 1:nm] f using (xi(column(14)) + dodge(j)):(bseg(word(models, j), O, 0)):(xi(column(3)) - xi(column(14))):(column(12) - column(15)) \
                        with vectors nohead lw 2.2 dt 3 lc rgb mcol(word(models, j)), \
                     for [j = 1:nm] f using (xi(column(3)) + dodge(j)):(bm(word(models, j), O)):(column(13)) \
                        with yerrorbars pt mpt(word(models, j)) ps 1.4 * PS lw 1.5 lc rgb mcol(word(models, j)), \
                     for [j = 1:nm] f using (xi(column(3)) + dodge(j)):(bc(word(models, j), O)):(0):(0.38 * bc(word(models, j), O)) \
                        with vectors head filled size screen 0.006, 25, 60 lw 1.2 lc rgb mcol(word(models, j)), \
                     for [j = 1:nm] f using (xi(column(3)) + dodge(j)):(bc(word(models, j), O)) \
                        with points pt mpt(word(models, j)) - 1 ps 1.1 * PS lw 1.3 lc rgb mcol(word(models, j))
            } else {
                set title sprintf("%s: slowdown at s = %d", oname(O), S) font ",13"
                set ylabel (c == 1 ? sprintf("slowdown at s = %d (batches / at s = 0)", S) : "")
                set yrange [0.8 : ytop]
                set ytics ("1" 1, "2" 2, "3" 3, "5" 5, "10" 10, "20" 20, "30" 30)
                plot 1 with lines dt 3 lw 1.5 lc rgb "#888888", \
                     for [j = 1:nm] f using (xi(column(9)) + dodge(j)):(seg(word(models, j), O, S, 1)):(xi(column(3)) - xi(column(9))):(column(7) - column(10)) \
                        with vectors nohead lw 2.2 lc rgb mcol(word(models, j)), \
                     for [j = 1:nm] f using (xi(column(9)) + dodge(j)):(seg(word(models, j), O, S, 0)):(xi(column(3)) - xi(column(9))):(column(7) - column(10)) \
                        with vectors nohead lw 2.2 dt 3 lc rgb mcol(word(models, j)), \
                     for [j = 1:nm] f using (xi(column(3)) + dodge(j)):(meas(word(models, j), O, S)):(column(8)) \
                        with yerrorbars pt mpt(word(models, j)) ps 1.4 * PS lw 1.5 lc rgb mcol(word(models, j)), \
                     for [j = 1:nm] f using (xi(column(3)) + dodge(j)):(cens(word(models, j), O, S)):(0):(0.38 * cens(word(models, j), O, S)) \
                        with vectors head filled size screen 0.006, 25, 60 lw 1.2 lc rgb mcol(word(models, j)), \
                     for [j = 1:nm] f using (xi(column(3)) + dodge(j)):(cens(word(models, j), O, S)) \
                        with points pt mpt(word(models, j)) - 1 ps 1.1 * PS lw 1.3 lc rgb mcol(word(models, j))
            }
        }
    }
    if (nnone > 0) {
        set label 1 sprintf("%d cells without a reference (no s = 0 run reached the target) left out", nnone) at screen 0.5, screen 12.0 / Hf center font ",11"
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
    set tmargin at screen 158.0 / Hf
    set key at screen 0.5, screen 158.0 / Hf center top horizontal maxrows 1 samplen 2 spacing 1.2 width 1 box opaque font ",12"
    plot for [j = 1:nm] NaN with linespoints pt mpt(word(models, j)) ps 1.4 * PS lw 2.2 lc rgb mcol(word(models, j)) title mlabel(word(models, j))
    unset label 1
    set key at screen 0.5, screen 118.0 / Hf center top horizontal maxrows 1 samplen 3 spacing 1.2 width 1 box opaque font ",12"
    plot NaN with lines lw 2.2 lc rgb "#444444" title "solid: same step at both P", \
         NaN with lines lw 2.2 dt 3 lc rgb "#444444" title (nretune > 0 ? "dotted: step retuned" : ""), \
         NaN with lines lw 1.5 dt 4 lc rgb "#888888" title sprintf("dash-dot: budget (%d)", budget)
    set key at screen 0.5, screen 78.0 / Hf center top vertical maxrows 2 samplen 1 spacing 1.2 width 1 box opaque font ",12"
    plot NaN with points pt 7 ps 1.4 * PS lc rgb "#444444" \
            title sprintf("filled: every seed reached the target (bars: +-1 SE over %s seeds)", seeds), \
         NaN with points pt 6 ps 1.1 * PS lw 1.3 lc rgb "#444444" \
            title (ncens + ncens0 > 0 ? "open, arrow up: censored, a seed missed the budget: at least this" : "")
    unset multiplot
}
