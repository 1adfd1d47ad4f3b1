#!/usr/bin/env bash
# Regenerates every figure the docs show into docs/figures/ (`amsgd figures`: the commands a
# user would type, each figure beside its data file and editable gnuplot script), and the full
# validation run quoted in docs/validate.md. Usage: scripts/figures.sh BUILD/amsgd
set -euo pipefail
bin=${1:-build/amsgd}
here=$(cd "$(dirname "$0")/.." && pwd)
"$bin" figures --dir "$here/docs/figures"
# the full theorem checks (exit 1 when a row fails: a finding, kept in the JSON)
"$bin" validate --format json -o "$here/docs/validate_full.json" || [ $? -eq 1 ]
echo "figures: written to $here/docs/figures" >&2
