#!/usr/bin/env bash
# The amsgd demo: the theorem checks at reduced size, the streaming-PCA experiment of
# Liu et al. (2018) as a momentum x delay sweep, a convergence study as eta -> 0, and the three
# engines on one grid. Writes data, figures (PNG and SVG), report.md and report.html (the
# verdict table, the parameters and every figure inline, scripts/report-html.py) into OUT.
# About 2-5 minutes on 2 cores. Usage: scripts/demo.sh BUILD/amsgd OUT
# The full-size runs are described in docs/validate.md, docs/phase.md and docs/converge.md.
set -euo pipefail
bin=${1:-build/amsgd}
out=${2:-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
fig=$(cd "$(dirname "$0")/../docs/figures" && pwd)
log() { printf 'amsgd demo: %s\n' "$*" >&2; }
both() { # both SCRIPT.gp ARGS...: render PNG and SVG with an output-format-aware script
    local gp=$1 data=$2 base=$3
    shift 3
    gnuplot -c "$fig/$gp" "$data" "$base.png" "$@"
    gnuplot -c "$fig/$gp" "$data" "$base.svg" "$@"
}
start=$(date +%s)

log "1/4 theorem checks (amsgd validate --quick)"
set +e
"$bin" validate --quick --format json -o "$out/validate.json"
vstatus=$?
set -e
echo "$vstatus" > "$out/validate.status" # 0: every check passed (or is a documented finding)
# the verdict table of the report, from the same run (scripts/validate-table.py --print)
python3 "$(dirname "$0")/validate-table.py" --print "$out/validate.json" > "$out/validate_table.md"

log "2/4 momentum x delay sweep (amsgd phase --preset liu2018)"
"$bin" phase --preset liu2018 --quiet --checkpoint "$out/.liu2018.ckpt" --format json \
    -o "$out/liu2018.json"
"$bin" phase --preset liu2018 --quiet --checkpoint "$out/.liu2018.ckpt" --resume \
    -o "$out/liu2018.csv"
rm -f "$out/.liu2018.ckpt"
# the OU prediction at tau = 0 of every simulated momentum
for m in $(tail -n +2 "$out/liu2018.csv" | cut -d, -f1 | sort -u -g); do
    "$bin" theory --mu "$m" --eta 5e-4 | sed -n "s/^stationary_error,,/$m,/p"
done > "$out/liu2018_ou.csv"
lines_title="liu2018: stationary error versus delay (d = 4, Sigma = diag(4,3,2,1), eta = 5e-4, 200 replicas)"
heat_title="liu2018: stationary error per momentum and delay (d = 4, eta = 5e-4, 200 replicas)"
heat_cb="stationary error 1 - (v1.v)^2/|v|^2"
heat_x="delay tau (steps)"
both phase_lines.gp "$out/liu2018.csv" "$out/liu2018_lines" "$lines_title" "$out/liu2018_ou.csv"
both phase_heatmap.gp "$out/liu2018.csv" "$out/liu2018_heat" "$heat_title" log "$heat_cb" "$heat_x"

log "3/4 convergence to the ODE and the SDE as eta -> 0 (amsgd converge)"
set +e
"$bin" converge --mu 0.5 --etas 2e-3,1e-3,5e-4,2.5e-4 --time 1 --replicas 4000 --sde \
    -o "$out/converge.csv"
"$bin" converge --mu 0.5 --etas 2e-3,1e-3,5e-4,2.5e-4 --time 1 --replicas 4000 --sde \
    --format json -o "$out/converge.json"
set -e
(cd "$out" && gnuplot -e "data='converge.csv'; json='converge.json'; out='converge'; title='d = 4, Sigma = diag(4,3,2,1), mu = 0.5, T = 1, R = 4000 replicas (bars: +-2 SE)'" "$fig/converge.gp")

log "4/4 the three engines on one grid (amsgd compare)"
"$bin" compare --eta 1e-3 --mu 0.5 --time 6 --grid 121 --replicas 4000 -o "$out/compare.csv"
pred=$("$bin" theory --mu 0.5 --eta 1e-3 | sed -n 's/^stationary_error,,//p')
(cd "$out" && gnuplot -e "data='compare.csv'; out='compare'; title='d = 4, Sigma = diag(4,3,2,1), mu = 0.5, eta = 1e-3, no delay, 4000 replicas: mc, sde, ode'; pred=$pred" "$fig/compare.gp")

summary=$(python3 -c 'import json, sys; v = json.load(open(sys.argv[1]))
print("%d rows: %d PASS (%s of them reject a prediction 20 %% off), %d FAIL (%d of them "
      "documented findings), %d INCONCLUSIVE" % (len(v["checks"]), v["pass"], v["pass_with_power"],
      v["fail"], v["fail_findings"], v["inconclusive"]))' "$out/validate.json")
# top-level keys of the JSON are indented by one space (params are nested deeper)
order=$(sed -n 's/^ "order": *\([-0-9.e]*\).*/\1/p' "$out/converge.json" | head -n 1)
order=$(printf "%.3f" "${order:-nan}")
verdict=$(sed -n 's/^ "verdict": *"\([A-Z]*\)".*/\1/p' "$out/converge.json" | head -n 1)
{
    echo "# amsgd demo report"
    echo
    echo "Made by \`make demo\` with $("$bin" --version) in $(( $(date +%s) - start )) s."
    echo
    echo "## Theorem checks (\`amsgd validate --quick\`)"
    echo
    echo "$summary (exit status $vstatus). Per row: measured value +- h (the half-width of the"
    echo "interval that decides), prediction, tolerance, minimum detectable difference, power"
    echo "(the verdicts against the prediction 20 % lower / higher, orders 0.2: F where a wrong"
    echo "prediction is rejected, - where a one-sided bound cannot fail), verdict (with the verdict"
    echo "against the undelayed prediction for a delayed row); the notes, the replicas an"
    echo "INCONCLUSIVE row needs and the documented findings are in validate.json and report.html."
    echo "Full size: \`amsgd validate\` (docs/validate.md)."
    echo
    cat "$out/validate_table.md"
    echo
    echo "## Momentum versus delay (\`amsgd phase --preset liu2018\`)"
    echo
    echo "Stationary error against the delay, one curve per momentum: liu2018_lines.png/.svg;"
    echo "heat map with the theory's boundaries: liu2018_heat.png/.svg; data: liu2018.csv."
    echo
    echo "## Convergence as eta -> 0 (\`amsgd converge\`)"
    echo
    echo "Weak error of the discrete ensemble against the ODE, mu = 0.5, eta = 2e-3 .. 2.5e-4:"
    echo "fitted order $order, verdict $verdict (converge.png/.svg, converge.csv, converge.json)."
    echo
    echo "## Three engines on one grid (\`amsgd compare\`)"
    echo
    echo "mc, sde and ode with mu = 0.5, eta = 1e-3: compare.png/.svg, compare.csv."
} > "$out/report.md"
# the HTML report: verdicts, parameters and every figure inline, each with its command
{
    printf '%s\t%s\t%s\n' liu2018_lines 'stationary error against the delay per momentum' \
        "amsgd phase --preset liu2018 -o liu2018.csv; gnuplot -c docs/figures/phase_lines.gp liu2018.csv liu2018_lines.svg '$lines_title' liu2018_ou.csv"
    printf '%s\t%s\t%s\n' liu2018_heat 'heat map with the theory boundaries' \
        "gnuplot -c docs/figures/phase_heatmap.gp liu2018.csv liu2018_heat.svg '$heat_title' log '$heat_cb' '$heat_x'"
    printf 'converge\tweak error against the ODE and the SDE as eta -> 0\tamsgd converge --mu 0.5 --etas 2e-3,1e-3,5e-4,2.5e-4 --time 1 --replicas 4000 --sde -o converge.csv\n'
    printf 'compare\tmc, sde and ode on one grid\tamsgd compare --eta 1e-3 --mu 0.5 --time 6 --grid 121 --replicas 4000 -o compare.csv\n'
} > "$out/figures.txt"
python3 "$(dirname "$0")/report-html.py" "$out" -o "$out/report.html" \
    --title "amsgd demo report" \
    --intro "Made by make demo with $("$bin" --version) in $(( $(date +%s) - start )) s: $summary (validate exit status $vstatus); converge fitted order $order, verdict $verdict."
log "done in $(( $(date +%s) - start )) s: report $out/report.md and $out/report.html, figures and data in $out/"
