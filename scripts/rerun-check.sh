#!/usr/bin/env bash
# Reruns committed results with `amsgd rerun` and fails when one no longer reproduces byte for
# byte (a stale result, or a change that moved output bytes without regenerating it).
# Usage: scripts/rerun-check.sh BIN [FILE.json ...]
# Without files: every JSON result in docs/figures/ that reruns in seconds; the full-size
# network runs (tradeoff_fixed, tradeoff_fixed6, tradeoff_effective: minutes each) and the
# full wallclock --sweep are checked through their --quick twins (tradeoff_quick,
# staleness_dai2019_quick, wallclock_sweep_quick), which run the same code at reduced size.
# A network result records its BLAS kernel ("blas"); where this CPU cannot run that kernel,
# bytes cannot agree (docs/rerun.md) and the file is reported as skipped, not failed.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:?usage: rerun-check.sh BIN [FILE.json ...]}
shift
if [ $# -eq 0 ]; then
    set -- "$here"/docs/figures/{converge,geo,knee,liu2018,wallclock_lsq,wallclock_sweep_quick}.json \
        "$here"/docs/figures/{wallclock_nn_mlr,wallclock_nn_mlr_lr002,tradeoff_quick,staleness_dai2019_quick}.json
fi
bad=0 skipped=0
log=$(mktemp)
for f in "$@"; do
    "$bin" rerun "$f" 2>"$log"
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "rerun-check: $(basename "$f"): identical"
    elif grep -q "which this CPU cannot run" "$log"; then
        echo "rerun-check: $(basename "$f"): skipped: $(head -n 1 "$log")"
        skipped=$((skipped + 1))
    else
        echo "rerun-check: $(basename "$f"): FAILED (exit $rc)" >&2
        cat "$log" >&2
        bad=$((bad + 1))
    fi
done
rm -f "$log"
echo "rerun-check: $# files, $bad not reproduced, $skipped skipped"
[ $bad -eq 0 ]
