#!/bin/sh
# bench-ode.sh BUILD -- CVODE (bench_ode) against SciPy solve_ivp (bench/ode_scipy.py) on the
# limit ODE, d = 4, 100, 1000, standard and rotated eigenbasis, default tolerances, mu = 0,
# horizon 10, 200 saved times. Prints one table; ratio = scipy_ms / cvode_ms.
set -eu
build=${1:-build}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
"$build/bench_ode" --dims 4,100,1000 --out "$dir"
"$build/bench_ode" --dims 4,100,1000 --rotate 7 --out "$dir"
/usr/bin/python3 bench/ode_scipy.py "$dir"
