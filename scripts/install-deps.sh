#!/usr/bin/env bash
# Installs the Debian packages amsgd needs, if any is missing. Safe to run repeatedly.
# Usage: scripts/install-deps.sh [--mpi] [--bench] [--clang] [--report]
# --report: headless Chromium (large) for the rendering check of the demo's HTML report.
set -euo pipefail

pkgs=(build-essential libsundials-dev libgsl-dev libfftw3-dev libcriterion-dev
      librandom123-dev libjansson-dev gnuplot-nox pkg-config python3-numpy
      libopenblas-dev zlib1g-dev dataset-fashion-mnist)
for arg in "$@"; do
    case "$arg" in
    --mpi) pkgs+=(libopenmpi-dev openmpi-bin) ;;
    --bench) pkgs+=(python3-numpy python3-scipy python3-numba hyperfine time bc python3-torch) ;;
    --report) pkgs+=(python3 chromium) ;;
    --clang) pkgs+=(clang libomp-dev) ;; # the clang build of make bitident-check (OpenMP: libomp)
    *) echo "install-deps: unknown option '$arg'" >&2; exit 2 ;;
    esac
done

missing=()
for p in "${pkgs[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
        echo "install-deps: missing packages and not root; run as root: apt-get install ${missing[*]}" >&2
        exit 1
    fi
else
    SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >&2
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
