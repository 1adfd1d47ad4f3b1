# staleness_inputs.gp -- what standardising the inputs does to Dai et al.'s staleness results
# on Fashion-MNIST (`amsgd staleness --preset dai2019 --models mlr,mlp1 --optimizer
# sgd,momentum,adam --workers 1,4 --s 0,8 --seeds 10 --budget-factor 0`, once with --inputs raw and once with
# --inputs standardised; each cell's step tuned at s = 0 on its own inputs).
# Top: the slowdown at s = 8 (batches to the target divided per seed by those at s = 0) per
# cell (model, optimiser, P), raw pixels and standardised inputs side by side. Filled markers:
# every seed reached the target at both s; the marker is the mean over the 10 seeds and the bar
# its 95 % Student t interval (9 degrees of freedom); a cross marks the median. Open markers
# with an upward arrow: censored (some seed missed the target within the 4000-batch budget),
# drawn at the lower bound normalized_lower. Log scale; the dotted line is 1 (no slowdown).
# Bottom: the gradient coherence at s = 8 (mean cosine of the gradients s iterations apart
# along the run), mean and 95 % t interval from its standard error over the seeds.
# Data: staleness_inputs_raw.csv and staleness_inputs_standardised.csv beside this script.
# Render: cd docs/figures && gnuplot staleness_inputs.gp
#   (writes staleness_inputs.png and staleness_inputs.svg)
t9 = 2.2621571627409915
# One table per input mode: the s = 8 rows in file order, whitespace-separated. Columns: 1 cell
# index, 2 label, 3 kind (m: measured, c: censored), 4 value (normalized or normalized_lower),
# 5 t low, 6 t high, 7 median, 8 coherence, 9 its t half-width.
table(f) = "awk 'FNR > 1' " . f . " | sed -e 's/\"[^\"]*\"//' | " . \
    "awk -F, '$5 == 8 { o = $3; sub(/momentum/, \"mom\", o); sub(/sgd/, \"SGD\", o); sub(/adam/, \"Adam\", o); " . \
    "k = ($9 == $8 && $24 != \"nan\") ? \"m\" : \"c\"; y = (k == \"m\") ? $12 : $22; " . \
    sprintf("ch = ($17 == \"nan\") ? 0 : %.10f * $17; ", t9) . \
    "print n++, $1 \"-\" o \"-P\" $4, k, y, $24, $25, $26, $16, ch }'"
raw = "< " . table("staleness_inputs_raw.csv")
std = "< " . table("staleness_inputs_standardised.csv")
ncell = system(table("staleness_inputs_raw.csv") . " | wc -l") + 0
dx = 0.17
do for [ext in "png svg"] {
    if (ext eq "png") { set terminal pngcairo size 1100,820 font "Sans,10" } else { set terminal svg size 1100,820 font "Sans,10" }
    set output "staleness_inputs." . ext
    set multiplot layout 2,1 title "Fashion-MNIST, Dai et al.'s protocol (SSP, step tuned at s = 0 per cell), 10 seeds, budget 4000 batches of 32"
    set lmargin 10
    set rmargin 3
    set xrange [-0.6:ncell - 0.4]
    set xtics 0, 1, ncell - 1 nomirror
    set grid ytics
    set key top left opaque box
    set logscale y 2
    set yrange [0.8:32]
    set ylabel "slowdown at s = 8 (batches to target / at s = 0)"
    set format x ""
    unset xlabel
    plot 1 with lines dt 3 lc rgb "gray40" notitle, \
         raw using (strcol(3) eq "m" ? $1 - dx : NaN):4:5:6 with yerrorbars pt 7 ps 1.1 lc rgb "#b2182b" title "raw pixels: mean, 95 % t interval", \
         raw using (strcol(3) eq "m" ? $1 - dx : NaN):7 with points pt 2 ps 1.2 lc rgb "#b2182b" title "raw: median", \
         raw using (strcol(3) eq "c" ? $1 - dx : NaN):4 with points pt 6 ps 1.3 lc rgb "#b2182b" title "raw: censored, lower bound", \
         raw using (strcol(3) eq "c" ? $1 - dx : NaN):4:(0):($4 * 0.5) with vectors head size 0.06,20 lc rgb "#b2182b" notitle, \
         std using (strcol(3) eq "m" ? $1 + dx : NaN):4:5:6 with yerrorbars pt 5 ps 1.1 lc rgb "#2166ac" title "standardised: mean, 95 % t interval", \
         std using (strcol(3) eq "m" ? $1 + dx : NaN):7 with points pt 2 ps 1.2 lc rgb "#2166ac" title "standardised: median", \
         std using (strcol(3) eq "c" ? $1 + dx : NaN):4 with points pt 4 ps 1.3 lc rgb "#2166ac" title "standardised: censored, lower bound", \
         std using (strcol(3) eq "c" ? $1 + dx : NaN):4:(0):($4 * 0.5) with vectors head size 0.06,20 lc rgb "#2166ac" notitle
    unset logscale y
    set yrange [-0.7:1]
    set ylabel "gradient coherence at s = 8 (cosine)"
    set xlabel "cell: model - optimiser - workers P"
    set format x "%s"
    set xtics () rotate by -30 offset 0,0
    set key top right
    plot 0 with lines dt 3 lc rgb "gray40" notitle, \
         raw using ($1 - dx):8:9:xtic(2) with yerrorbars pt 7 ps 1.1 lc rgb "#b2182b" title "raw pixels", \
         std using ($1 + dx):8:9 with yerrorbars pt 5 ps 1.1 lc rgb "#2166ac" title "standardised"
    unset multiplot
}
