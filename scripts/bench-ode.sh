#!/bin/sh
# bench-ode.sh BUILD -- CVODE (bench_ode) against SciPy solve_ivp (bench/ode_scipy.py) on the
# limit ODE, d = 4, 100, 1000, standard and rotated eigenbasis, default tolerances, mu = 0,
# horizon 10, 200 saved times. SciPy runs at the default tolerances (rtol 1e-9, atol 1e-13),
# CVODE at those and at the other pairs of rtols x atols below (the equal-or-better-accuracy
# comparison takes the fastest CVODE run at least as accurate as each SciPy method).
# Prints two tables; ratio = scipy_ms / cvode_ms. One core on each side.
set -eu
build=${1:-build}
rtols=1e-9,3e-10,1e-10,3e-11
atols=1e-13,1e-11
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
"$build/bench_ode" --dims 4,100,1000 --rtols "$rtols" --atols "$atols" --out "$dir"
"$build/bench_ode" --dims 4,100,1000 --rotate 7 --rtols "$rtols" --atols "$atols" --out "$dir"
# one core on both sides: NumPy's BLAS (OpenBLAS) would otherwise thread the dense product
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 /usr/bin/python3 bench/ode_scipy.py "$dir"
