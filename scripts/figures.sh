#!/usr/bin/env bash
# Regenerates every figure the docs show into docs/figures/, from the same commands a user
# would type. Each figure keeps its data file and its editable gnuplot script beside it.
# Usage: scripts/figures.sh BUILD/amsgd
set -euo pipefail
bin=${1:-build/amsgd}
here=$(cd "$(dirname "$0")/.." && pwd)
dst="$here/docs/figures"
mkdir -p "$dst"

# mc_error: mean error of the ensemble with its +-2 SE band
"$bin" mc --dim 4 --spectrum 4,3,2,1 --eta 1e-3 --mu 0.5 --delay const:40 --time 8 \
    --grid 161 --replicas 4000 --seed 1 -o "$dst/mc_error.csv"
(cd "$dst" && gnuplot -e "data='mc_error.csv'; out='mc_error'; title='Async-MSGD, mu = 0.5, delay 40, eta = 1e-3 (band: +-2 SE)'" mc_error.gp)


# compare: mc, sde and ode on one grid
"$bin" compare --dim 4 --spectrum 4,3,2,1 --eta 1e-3 --mu 0.5 --time 6 --grid 121 \
    --replicas 4000 --seed 1 -o "$dst/compare.csv"
(cd "$dst" && gnuplot -e "data='compare.csv'; out='compare'; title='mu = 0.5, eta = 1e-3, d = 4: mc, sde, ode (bands: +-2 SE)'" compare.gp)

# runtime: time per iteration against K for the parameter-server variants
for rt in exp:1 shiftexp:1:1 pareto:2.5:1; do
    "$bin" runtime --workers 8 --K 1,2,3,4,5,6,7,8 --runtime "$rt" -o "$dst/runtime_${rt%%:*}.csv"
done
(cd "$dst" && gnuplot runtime.gp)

# staleness: normalised steps to the target against s, one curve per optimiser
"$bin" staleness --objective lsq --s 0,1,2,4,8,16 -o "$dst/staleness_lsq.csv"
"$bin" staleness --objective logistic --s 0,1,2,4,8,16 -o "$dst/staleness_logistic.csv"
(cd "$dst" && gnuplot staleness.gp)

# wallclock and adaptive: error against wall-clock time, constant and adaptive steps
"$bin" wallclock --objective lsq --grid 201 -o "$dst/wallclock_lsq.csv"
"$bin" wallclock --objective pca --eta 0.005 --updates 3000 --grid 101 -o "$dst/wallclock_pca.csv"
(cd "$dst" && gnuplot wallclock.gp)
"$bin" wallclock --variants async,k-async:4 --grid 201 -o "$dst/adaptive_const.csv"
"$bin" wallclock --variants async,k-async:4 --lr adaptive:1e-4:0.02 --grid 201 -o "$dst/adaptive_adaptive.csv"
(cd "$dst" && gnuplot adaptive.gp)

# phase diagrams and the knee (liu2018 preset, knee search, geometric staleness)
"$here/scripts/sweep-figures.sh" "$bin" "$dst"

# converge: weak error against the ODE and the SDE as eta -> 0, with the fitted line
"$bin" converge --mu 0.5 --etas 2e-3,1e-3,5e-4,2.5e-4 --time 1 --replicas 10000 --sde --seed 1 \
    -o "$dst/converge.csv" || true   # exit 1 would be a FAIL verdict, which the figure shows
(cd "$dst" && gnuplot -e "data='converge.csv'; out='converge'" converge.gp)

# validate: the full run quoted in docs/validate.md (exit 1 when a row fails: a finding)
"$bin" validate --format json -o "$here/docs/validate_full.json" || true
echo "figures: written to $dst" >&2
