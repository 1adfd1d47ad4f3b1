#!/usr/bin/env bash
# Runs the benchmarks of bench/ in one go and prints their tables (see bench/README.md).
# Usage: scripts/bench.sh BUILD
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3   # Debian's python3, where python3-numpy and python3-scipy live

echo "== Monte Carlo kernel: ns per coordinate-step, 1 thread, vs drawing the random numbers alone"
"$build/bench_mc" "${BENCH_MC_BUDGET:-4e8}" | tee "$build/bench_mc.txt"
echo
echo "== NumPy peer (same step, batched over replicas, 1 thread)"
"$py" "$here/bench/mc_numpy.py" "${BENCH_NUMPY_BUDGET:-4e7}" | tee "$build/bench_numpy.txt"
echo
echo "== Ratios (NumPy ns / amsgd ns per coordinate-step, per core)"
awk 'NR==FNR && !/^#/ {k[$1" "$2]=$3; next} !/^#/ && ($1" "$2) in k {printf "%5s %-10s amsgd %.2f ns, numpy %.2f ns, speed-up %.1fx\n", $1, $2, k[$1" "$2], $3, $3/k[$1" "$2]}' \
    "$build/bench_mc.txt" "$build/bench_numpy.txt"
echo
echo "== SDE engine: ns per coordinate-step next to the Monte Carlo kernel"
"$build/bench_sde"
echo
echo "== ODE: CVODE against SciPy solve_ivp at equal tolerances"
"$here/scripts/bench-ode.sh" "$build"
echo
echo "== Sweeps: liu2018 preset wall time, cells per second, peak memory"
"$here/scripts/bench-sweep.sh" "$build"
