#!/usr/bin/env bash
# Regenerates every figure the docs show into docs/figures/ (`amsgd figures`: the commands a
# user would type, each figure beside its data file and editable gnuplot script), and the full
# validation run quoted in docs/validate.md. Usage: scripts/figures.sh BUILD/amsgd
set -euo pipefail
bin=${1:-build/amsgd}
here=$(cd "$(dirname "$0")/.." && pwd)
"$bin" figures --dir "$here/docs/figures"
# Liu et al.'s deep-network bars (docs/tradeoff.md), both step rules. From scratch each run
# takes about 5 CPU-minutes; the checkpoints kept beside the figures make a rerun with the
# same parameters, code version and data instant (a checkpoint of other parameters is refused:
# delete it to recompute).
(
    cd "$here/docs/figures"
    for rule in fixed effective; do
        case $rule in fixed) lr=0.01 ;; *) lr=0.1 ;; esac
        for fmt in json csv; do
            "$bin" tradeoff --preset liu2018-dnn --step-rule $rule --lr $lr --quiet \
                --checkpoint tradeoff_$rule.ckpt --resume --format $fmt -o tradeoff_$rule.$fmt
        done
    done
    # the fixed rule again with 6 seeds (about 10 CPU-minutes from scratch)
    for fmt in json csv; do
        "$bin" tradeoff --preset liu2018-dnn --seeds 6 --quiet --checkpoint tradeoff_fixed6.ckpt \
            --resume --format $fmt -o tradeoff_fixed6.$fmt
    done
    gnuplot -c tradeoff.gp tradeoff_fixed6.csv tradeoff_fixed6.png "Fashion-MNIST, mlp:128, 10000 updates of batch 32, step 0.01 for every mu (fixed rule), exp(1) runtimes, 6 seeds"
    gnuplot -c tradeoff.gp tradeoff_fixed.csv tradeoff_fixed.png "Fashion-MNIST, mlp:128, 10000 updates of batch 32, step 0.01 for every mu (fixed rule), exp(1) runtimes, 3 seeds"
    gnuplot -c tradeoff.gp tradeoff_effective.csv tradeoff_effective.png "Fashion-MNIST, mlp:128, 10000 updates of batch 32, effective step 0.1 = lr/(1-mu) for every mu, exp(1) runtimes, 3 seeds"
)
# the full theorem checks (exit 1 when a row fails: a finding, kept in the JSON)
"$bin" validate --format json -o "$here/docs/validate_full.json" || [ $? -eq 1 ]
echo "figures: written to $here/docs/figures" >&2
