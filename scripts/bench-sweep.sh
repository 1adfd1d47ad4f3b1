#!/usr/bin/env bash
# bench-sweep.sh -- performance of the sweeps: the `amsgd phase --preset liu2018` run at its
# documented default size (85 cells, 200 replicas, 40,000 steps each) on 2 threads: wall time,
# cells per second, peak resident memory; then peak memory of one cell at 4x, 16x the steps
# (it must not grow with the number of steps: statistics are streamed).
# Usage: scripts/bench-sweep.sh [build-dir]   (default build); about 1 minute on 2 cores.
set -euo pipefail
B=${1:-build}
BIN=$B/amsgd
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
measure() { # measure NAME ARGS... -> prints wall seconds and peak RSS (kB)
    local name=$1
    shift
    /usr/bin/time -f "%e %M %U" -o "$TMP/t" "$BIN" "$@" --quiet -o "$TMP/out" >/dev/null
    read -r wall rss cpu <"$TMP/t"
    echo "$name $wall $rss $cpu"
}
echo "# sweep benchmark: $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "load average before the run: $(cut -d" " -f1-3 /proc/loadavg)"
read -r _ wall rss cpu < <(measure preset phase --preset liu2018 --threads 2)
cells=85
printf 'liu2018 preset (85 cells x 200 replicas x 40000 steps, 2 threads): wall %.1f s, %.2f cells/s, user CPU %.1f s (%.0f ns per replica-step), peak RSS %.1f MiB\n' \
    "$wall" "$(echo "$cells / $wall" | bc -l)" "$cpu" "$(echo "$cpu * 1000000000 / ($cells * 200 * 40000)" | bc -l)" \
    "$(echo "$rss / 1024" | bc -l)"
echo "peak RSS of one cell (mu 0.9, tau 20, 50 replicas) against the number of steps:"
for T in 5 20 80; do
    read -r _ wall rss cpu < <(measure "T=$T" phase --mu-grid 0.9 --tau-grid 20 --replicas 50 \
        --time "$T" --threads 2)
    printf '  steps %8d: wall %5.2f s, peak RSS %.1f MiB\n' "$(echo "$T / 0.0005" | bc)" "$wall" \
        "$(echo "$rss / 1024" | bc -l)"
done
