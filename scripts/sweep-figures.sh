#!/usr/bin/env bash
# sweep-figures.sh -- the sweep results quoted in docs/findings.md and their figures:
# the liu2018 phase preset (error versus delay, heat map), the knee search (log-log of tau_c
# against 1 - mu) and a geometric-staleness phase diagram with the implicit momentum.
# Usage: scripts/sweep-figures.sh [amsgd-binary] [out-dir]   (defaults build/amsgd, out/sweeps);
# a few minutes on 2 cores. The gnuplot scripts live in docs/figures/; checkpoints go to a
# temporary folder.
set -euo pipefail
BIN=${1:-build/amsgd}
OUT=${2:-out/sweeps}
mkdir -p "$OUT"
G=$(cd "$(dirname "$0")/../docs/figures" && pwd)
CK=$(mktemp -d)
trap 'rm -rf "$CK"' EXIT
"$BIN" phase --preset liu2018 --quiet --checkpoint "$CK/liu2018.ckpt" --format json -o "$OUT/liu2018.json"
"$BIN" phase --preset liu2018 --quiet --checkpoint "$CK/liu2018.ckpt" --resume -o "$OUT/liu2018.csv"
gnuplot -c $G/phase_lines.gp "$OUT/liu2018.csv" "$OUT/liu2018_lines.png" \
    "liu2018: stationary error versus delay (d = 4, Sigma = diag(4,3,2,1), eta = 5e-4)"
gnuplot -c $G/phase_heatmap.gp "$OUT/liu2018.csv" "$OUT/liu2018_heat.png" \
    "liu2018: stationary error (white: every replica diverged)" log
"$BIN" knee --quiet --checkpoint "$CK/knee.ckpt" --format json -o "$OUT/knee.json"
"$BIN" knee --quiet --checkpoint "$CK/knee.ckpt" --resume -o "$OUT/knee.csv"
gnuplot -c $G/knee_loglog.gp "$OUT/knee.csv" "$OUT/knee.png" \
    "critical delay (error x2 or divergence), eta = 5e-4, 200 replicas"
"$BIN" phase --delay-model geometric --mu-grid 0:0.9:10 --tau-grid 0:40:9 --metric ratio \
    --replicas 100 --time 10 --quiet --checkpoint "$CK/geo.ckpt" --format json -o "$OUT/geo.json"
"$BIN" phase --delay-model geometric --mu-grid 0:0.9:10 --tau-grid 0:40:9 --metric ratio \
    --replicas 100 --time 10 --quiet --checkpoint "$CK/geo.ckpt" --resume -o "$OUT/geo.csv"
gnuplot -c $G/phase_heatmap.gp "$OUT/geo.csv" "$OUT/geo_heat.png" \
    "geometric staleness: error ratio to no delay"
echo "sweep-figures: results and figures in $OUT" >&2
