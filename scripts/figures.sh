#!/usr/bin/env bash
# Regenerates every figure the docs show into docs/figures/ (`amsgd figures`: the commands a
# user would type, each figure beside its data file and editable gnuplot script), and the full
# validation run quoted in docs/validate.md. Usage: scripts/figures.sh BUILD/amsgd
set -euo pipefail
bin=${1:-build/amsgd}
here=$(cd "$(dirname "$0")/.." && pwd)
# The network results here were computed with the BLAS kernel their checkpoints record
# ("blas" in the header: OpenBLAS's kernels round differently, docs/rerun.md). Resuming them
# needs that kernel: select it where this CPU has it (else the runs are made anew; the same
# map of kernels to instruction sets as am_nn_blas_core_runs in models/am_nn.c).
core=$(grep -o 'OpenBLAS [0-9.]* [A-Za-z0-9]*' "$here/docs/figures/tradeoff_fixed.ckpt" | head -n 1 |
    awk '{print $3}')
flags=$(grep -m 1 '^flags' /proc/cpuinfo 2>/dev/null || true)
case "$core" in
    SkylakeX) need="avx512f avx512dq avx512vl" ;;
    Haswell | Zen | Sandybridge) need="avx2" ;;
    *) need="" ;;
esac
ok=1
for f in $need; do case " $flags " in *" $f "*) ;; *) ok=0 ;; esac; done
if [ -n "$core" ] && [ $ok -eq 1 ] && [ -z "${OPENBLAS_CORETYPE:-}" ]; then
    export OPENBLAS_CORETYPE=$core
    echo "figures: OPENBLAS_CORETYPE=$core (the kernel of the committed network results)" >&2
fi
"$bin" figures --dir "$here/docs/figures"
# Liu et al.'s deep-network figures (docs/tradeoff.md: accuracy against mu per P), both step rules. From scratch each run
# takes about 5 CPU-minutes (the 6-seed one 10); the checkpoints kept beside the figures make
# a rerun with the same parameters, code version and data instant. A checkpoint of other
# parameters (exit 2: a new version or other data) is deleted and the run made from scratch.
(
    cd "$here/docs/figures"
    trade() { # CKPT OUT_BASENAME ARGS...: JSON and CSV of one run, resumed from CKPT
        local ckpt=$1 base=$2 fmt
        shift 2
        for fmt in json csv; do
            "$bin" tradeoff --preset liu2018-dnn "$@" --quiet --checkpoint "$ckpt" --resume \
                --format $fmt -o "$base.$fmt" || {
                rc=$?
                [ $rc -eq 2 ] || exit $rc
                echo "figures: $ckpt belongs to other parameters; recomputing" >&2
                rm -f "$ckpt"
                "$bin" tradeoff --preset liu2018-dnn "$@" --quiet --checkpoint "$ckpt" \
                    --format $fmt -o "$base.$fmt"
            }
        done
    }
    trade tradeoff_fixed.ckpt tradeoff_fixed --inputs raw --step-rule fixed --lr 0.01 --seeds 3
    trade tradeoff_effective.ckpt tradeoff_effective --inputs raw --step-rule effective --lr 0.1 --seeds 3
    trade tradeoff_fixed6.ckpt tradeoff_fixed6 --inputs raw --seeds 6
    trade tradeoff_std.ckpt tradeoff_std --inputs standardised --seeds 10
    for ext in png svg; do
        gnuplot -c tradeoff.gp tradeoff_fixed6.csv tradeoff_fixed6.$ext "Fashion-MNIST raw pixels, mlp:128, 10000 updates of batch 32, step 0.01 for every mu (fixed rule), exp(1) runtimes, 6 seeds"
        gnuplot -c tradeoff.gp tradeoff_fixed.csv tradeoff_fixed.$ext "Fashion-MNIST raw pixels, mlp:128, 10000 updates of batch 32, step 0.01 for every mu (fixed rule), exp(1) runtimes, 3 seeds"
        gnuplot -c tradeoff.gp tradeoff_effective.csv tradeoff_effective.$ext "Fashion-MNIST raw pixels, mlp:128, 10000 updates of batch 32, effective step 0.1 = lr/(1-mu) for every mu, exp(1) runtimes, 3 seeds"
        gnuplot -c tradeoff.gp tradeoff_std.csv tradeoff_std.$ext "Fashion-MNIST standardised, mlp:128, 10000 updates of batch 32, step 0.01 for every mu (fixed rule), exp(1) runtimes, 10 seeds"
    done
)
# the full theorem checks (exit 1 when a row fails: a finding, kept in the JSON)
"$bin" validate --format json -o "$here/docs/validate_full.json" || [ $? -eq 1 ]
python3 "$here/scripts/validate-table.py" "$here/docs/validate_full.json" "$here/docs/validate.md"
echo "figures: written to $here/docs/figures" >&2
