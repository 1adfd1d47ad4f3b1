#!/usr/bin/env bash
# Runs the benchmarks of bench/ in one go and prints their tables (see bench/README.md).
# Usage: scripts/bench.sh BUILD
#   BENCH_BASE=DIR/amsgd  also times `phase --preset liu2018 --replicas 40 --threads 1` of that
#                         build against this one, alternately, with hyperfine
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3   # Debian's python3, where python3-numpy, -scipy and -numba live
# NumPy/Numba without the OpenBLAS core-type override some machines set (it slows a current
# NumPy; the kernels below use no BLAS call either way)
pyrun() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
    NUMBA_NUM_THREADS=1 "$py" "$@"; }

echo "# $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), load average before the run: $(cut -d" " -f1-3 /proc/loadavg)"
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); numpy $(pyrun -c 'import numpy; print(numpy.__version__)'), numba $(pyrun -c 'import numba; print(numba.__version__)')"
echo
echo "== Random numbers: ns per word / per normal, scalar and bulk calls (bench/README-rng.md)"
"$build/bench_rng" "${BENCH_RNG_BUDGET:-2e5}" "${BENCH_RNG_REPS:-20}" | tee "$build/bench_rng.txt"
echo
echo "== Monte Carlo kernel: ns (CPU time) per coordinate-step, const delay 8, mu 0.9, 1 thread"
echo "   (default path: replicas side by side for d <= 16; scalar: one replica at a time)"
"$build/bench_mc" "${BENCH_MC_BUDGET:-4e8}" "${BENCH_MC_REPS:-2}" | tee "$build/bench_mc.txt"
echo
echo "== NumPy peer (same step, batched over replicas, 1 thread, CPU time)"
pyrun "$here/bench/mc_numpy.py" "${BENCH_NUMPY_BUDGET:-4e7}" | tee "$build/bench_numpy.txt"
echo
echo "== Numba peer (same step, compiled loop, one replica at a time, 1 thread, CPU time)"
pyrun "$here/bench/mc_numba.py" "${BENCH_NUMBA_BUDGET:-4e7}" | tee "$build/bench_numba.txt"
echo
echo "== Ratios per core (peer ns / amsgd ns per coordinate-step, same run)"
awk 'FILENAME ~ /bench_mc/ && !/^#/ {k[$1" "$2]=$3; s[$1" "$2]=$4; next}
     FILENAME ~ /bench_numpy/ && !/^#/ {np[$1" "$2]=$3; next}
     FILENAME ~ /bench_numba/ && !/^#/ {nb[$1" "$2]=$3; next}
     END {printf "%5s %-10s %9s %9s %9s %9s %8s %8s\n", "dim", "dist", "amsgd", "scalar", "numpy", "numba", "np/am", "nb/am";
          n = split("4 gaussian,4 rademacher,100 gaussian,100 rademacher,1000 gaussian,1000 rademacher", keys, ",");
          for (i = 1; i <= n; i++) { c = keys[i]; split(c, f, " ");
              printf "%5s %-10s %9.2f %9.2f %9.2f %9.2f %7.1fx %7.1fx\n", f[1], f[2], k[c], s[c], np[c], nb[c], np[c]/k[c], nb[c]/k[c] } }' \
    "$build/bench_mc.txt" "$build/bench_numpy.txt" "$build/bench_numba.txt"
echo
echo "== liu2018 preset: phase --preset liu2018 --replicas 40 --threads 1 (85 cells x 40 replicas x 40000 steps)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/time -f "%e %U" -o "$tmp/t" "$build/amsgd" phase --preset liu2018 --replicas 40 --threads 1 \
    --quiet -o "$tmp/new.csv"
read -r wall cpu <"$tmp/t"
np_liu=$(awk '$1 == "liu2018" {print $3}' "$build/bench_numpy.txt")
printf 'amsgd: wall %.2f s, user %.2f s, %.1f ns (user CPU) per replica-step; NumPy at 40 replicas, d = 4: %s ns (CPU) per replica-step (%.0fx)\n' \
    "$wall" "$cpu" "$(echo "$cpu * 1000000000 / (85 * 40 * 40000)" | bc -l)" "$np_liu" \
    "$(echo "$np_liu / ($cpu * 1000000000 / (85 * 40 * 40000))" | bc -l)"
if [ -n "${BENCH_BASE:-}" ]; then
    echo "against $BENCH_BASE, alternately (hyperfine, ${BENCH_BASE_ROUNDS:-3} rounds of 2 runs each):"
    "$BENCH_BASE" phase --preset liu2018 --replicas 40 --threads 1 --quiet -o "$tmp/base.csv"
    # the simulated columns (mu, tau, metric, metric_sem, diverged_fraction); later builds
    # changed the paper's bound column (one C and gamma) and added reached_fraction
    if cmp -s <(cut -d, -f1-5 "$tmp/base.csv") <(cut -d, -f1-5 "$tmp/new.csv"); then
        echo "  simulated columns identical: yes"
    else
        echo "  simulated columns identical: NO"
    fi
    for r in $(seq "${BENCH_BASE_ROUNDS:-3}"); do
        hyperfine -N --runs 2 --export-json "$tmp/h$r.json" \
            -n base "$BENCH_BASE phase --preset liu2018 --replicas 40 --threads 1 --quiet -o $tmp/b.csv" \
            -n new "$build/amsgd phase --preset liu2018 --replicas 40 --threads 1 --quiet -o $tmp/n.csv" \
            >/dev/null
    done
    pyrun - "$tmp"/h*.json <<'PY'
import json, sys
t = {"base": [], "new": []}
u = {"base": [], "new": []}
for f in sys.argv[1:]:
    for r in json.load(open(f))["results"]:
        t[r["command"]] += r["times"]
        u[r["command"]].append(r["user"])  # mean user CPU of the round
for k in ("base", "new"):
    v = sorted(t[k])
    print(f"  {k}: wall min {v[0]:.2f} s, median {v[len(v) // 2]:.2f} s over {len(v)} runs; "
          f"user CPU min {min(u[k]):.2f} s (round means)")
print(f"  speed-up: wall {min(t['base']) / min(t['new']):.2f}x (min), "
      f"{sorted(t['base'])[len(t['base']) // 2] / sorted(t['new'])[len(t['new']) // 2]:.2f}x "
      f"(median); user CPU {min(u['base']) / min(u['new']):.2f}x (min)")
PY
fi
echo
echo "== SDE engine: ns per coordinate-step next to the Monte Carlo kernel"
"$build/bench_sde"
echo
echo "== ODE: CVODE against SciPy solve_ivp at equal tolerances"
"$here/scripts/bench-ode.sh" "$build"
echo
echo "== Sweeps: liu2018 preset wall time, cells per second, peak memory"
"$here/scripts/bench-sweep.sh" "$build"
