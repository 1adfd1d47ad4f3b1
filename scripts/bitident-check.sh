#!/usr/bin/env bash
# bitident-check.sh [DIR] -- the output bits must not depend on the build. Builds amsgd four
# times (the default one in build/, the others in separate build directories under DIR,
# default build-bitident/):
#
#   default   the default flags (OPT=-O2)
#   native    -O2 -march=native (FMA, AVX2/AVX-512 where the machine has them)
#   clang     CC=clang (OpenMP through libomp)
#   portable  PORTABLE=1: every x86 SIMD path compiled out (-DAM_PORTABLE), so each engine
#             runs its portable C path whatever the CPU has
#
# runs the same small invocations of amsgd mc, sde, ode, phase and validate --quick in each
# (JSON, every double with 17 significant digits; none of these outputs carries a wall time)
# and compares every output byte for byte with the default build's. Exit status 0 when all
# are identical, 1 otherwise (the first differing lines are printed).
# Usage: scripts/bitident-check.sh [DIR]   (JOBS=N: parallel compile jobs, default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
root=${1:-build-bitident}
jobs=${JOBS:-2}
scripts/install-deps.sh --clang

# the build directory of each build: the default one is the project's own build/ (reused
# when it is up to date), the others live under $root
dir_of() { if [ "$1" = default ]; then echo build; else echo "$root/$1"; fi; }

build() { # name, make arguments...
    local name=$1 dir
    dir=$(dir_of "$1")
    shift
    echo "bitident: building $name ($*)" >&2
    make --no-print-directory -j"$jobs" BUILD="$dir" "$@" "$dir/amsgd" >"$root/$name.log" 2>&1 ||
        { tail -20 "$root/$name.log" >&2; echo "bitident: build $name failed" >&2; exit 1; }
}

# name|arguments: small, fixed-seed runs of every engine the check covers
runs=(
    "mc|mc --dim 8 --rotate 3 --mu 0.5 --delay const:4 --replicas 200 --time 2 --grid 21 --coords --threads 2"
    "mc-ps|mc --dim 6 --mu 0.3 --delay workers:4:exp:1 --variant k-async:2 --replicas 100 --time 1 --grid 11 --threads 2"
    "mc-lanes|mc --dim 4 --mu 0.9 --delay const:8 --replicas 2000 --time 2 --grid 21 --threads 2"
    "mc-d100|mc --dim 100 --mu 0.9 --delay const:8 --replicas 64 --time 1 --grid 11 --threads 2"
    "mc-student|mc --dim 20 --dist student:5 --delay geometric:3 --init random-each --replicas 100 --time 1 --grid 11 --threads 2"
    "sde|sde --dim 8 --rotate 3 --mu 0.5 --replicas 200 --time 2 --grid 21 --coords --threads 2"
    "sde-ou|sde --model ou --dim 6 --mu 0.9 --replicas 200 --time 1 --grid 11 --threads 2"
    "sde-dense|sde --dim 6 --rotate 2 --sampler dense --replicas 100 --time 1 --grid 11 --threads 2"
    "ode|ode --dim 4 --mu 0.9 --coords"
    "ode-d200|ode --dim 200 --time 5 --grid 51"
    "ode-rotated|ode --dim 60 --rotate 7 --coords --time 5 --grid 51"
    "ode-bdf|ode --dim 30 --rotate 5 --method bdf --project --time 5 --grid 51"
    "ode-gmres|ode --dim 30 --rotate 5 --method bdf --linsol gmres --time 5 --grid 51"
    "phase|phase --mu-grid 0:0.9:3 --tau-grid 0:8:3 --replicas 20 --time 2 --grid 21 --quiet --threads 2"
    "validate|validate --quick --threads 2 --no-power"
)

mkdir -p "$root"
build default
# the other three without -g (debug information changes no instruction; it is 40 % of the
# compile time of montecarlo/am_msgd_batch.c)
build native CFLAGS="-O2 -march=native"
build clang CC=clang CFLAGS=-O2
build portable PORTABLE=1 CFLAGS=-O2

status=0
for r in "${runs[@]}"; do
    name=${r%%|*}
    read -r -a args <<<"${r#*|}"
    for b in default native clang portable; do
        # validate exits 1 when a check fails; the bytes are compared all the same
        "$(dir_of "$b")/amsgd" "${args[@]}" --format json >"$root/$b.$name.json" || [ $? -eq 1 ]
    done
    for b in native clang portable; do
        if cmp -s "$root/default.$name.json" "$root/$b.$name.json"; then
            echo "bitident: $name: $b identical ($(wc -c <"$root/default.$name.json") bytes)"
        else
            echo "bitident: $name: $b DIFFERS from default"
            diff "$root/default.$name.json" "$root/$b.$name.json" | head -8 || true
            status=1
        fi
    done
done
[ $status -eq 0 ] && echo "bitident: all outputs identical in the default, native, clang and portable builds"
exit $status
