#!/usr/bin/env bash
# The amsgd demo: runs the toolkit on the streaming-PCA problem of Liu et al. (2018),
# d = 4, Sigma = diag(4,3,2,1), and writes data, figures and a short report into OUT.
# Usage: scripts/demo.sh BUILD/amsgd OUT
set -euo pipefail
bin=${1:-build/amsgd}
out=${2:-out}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)

echo "amsgd demo: writing into $out/" >&2
common=(--dim 4 --spectrum 4,3,2,1 --eta 1e-3 --time 8 --grid 161 --replicas 4000 --seed 1)
"$bin" mc "${common[@]}" --mu 0.5 --delay none -o "$out/mc_sync.csv"
"$bin" mc "${common[@]}" --mu 0.5 --delay const:40 -o "$out/mc_delay40.csv"
"$bin" mc "${common[@]}" --mu 0.5 --delay const:40 --format json -o "$out/mc_delay40.json"
gnuplot -e "data='$out/mc_delay40.csv'; out='$out/mc_error'; title='Async-MSGD, mu = 0.5, delay 40, eta = 1e-3 (band: +-2 SE)'" \
    "$here/docs/figures/mc_error.gp"

last() { tail -n 1 "$1" | awk -F, '{printf "%.4g +- %.2g", $3, $4}'; }
{
    echo "# amsgd demo report"
    echo
    echo "Streaming PCA, d = 4, Sigma = diag(4,3,2,1), eta = 1e-3, mu = 0.5, 4000 replicas, seed 1."
    echo
    echo "| delay | mean error at t = 8 (+- 1 SE) |"
    echo "|---|---|"
    echo "| none | $(last "$out/mc_sync.csv") |"
    echo "| const:40 | $(last "$out/mc_delay40.csv") |"
    echo
    echo "Figure: mc_error.png / mc_error.svg. Data: mc_sync.csv, mc_delay40.csv, mc_delay40.json."
} > "$out/report.md"
echo "amsgd demo: done; report $out/report.md, figures $out/mc_error.png and $out/mc_error.svg" >&2
