#!/usr/bin/env bash
# check_layers_test.sh -- scripts/check-layers.py passes on the checkout and fails on copies
# of it with a broken rule planted: validate/ including a study, cli/ including a private
# header, amsgd.h missing a public header.
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
pass=0
fail=0
"$PY" scripts/check-layers.py >/dev/null && { echo "ok: the checkout keeps the rules"; pass=$((pass + 1)); } ||
    { echo "FAIL: the checkout breaks the rules"; "$PY" scripts/check-layers.py; fail=$((fail + 1)); }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
plant() { # NAME EXPECTED-TEXT COMMAND...: a fresh copy, the command run in it, the check must fail
    local name=$1 want=$2
    shift 2
    rm -rf "$TMP/t" && mkdir "$TMP/t"
    cp -r ARCHITECTURE.md amsgd.h core theory solvers montecarlo models validate studies cli \
        scripts "$TMP/t"/
    (cd "$TMP/t" && "$@")
    out=$("$PY" "$TMP/t/scripts/check-layers.py" "$TMP/t")
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q "$want" <<<"$out"; then
        echo "ok: $name is refused"; pass=$((pass + 1))
    else
        echo "FAIL: $name: exit $rc, output: $out"; fail=$((fail + 1))
    fi
}
plant "validate/ including a study" "validate/am_vf_dde.c includes studies/am_phase.h" \
    sh -c 'echo "#include \"../studies/am_phase.h\"" >> validate/am_vf_dde.c'
plant "cli/ including a private header" "private header studies/am_sweep_cell_impl.h" \
    sh -c 'echo "#include \"../studies/am_sweep_cell_impl.h\"" >> cli/cmd_phase.c'
plant "amsgd.h without a public header" "does not include the public header studies/am_knee.h" \
    sed -i '/studies\/am_knee.h/d' amsgd.h
plant "theory/ including montecarlo/" "theory/ may include core" \
    sh -c 'echo "#include \"../montecarlo/am_data.h\"" >> theory/am_theory.c'
echo "check_layers_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
