#!/usr/bin/env bash
# san-test.sh DIR JOBS [FILTER] -- runs DIR/test_amsgd (built with AddressSanitizer and
# UndefinedBehaviorSanitizer) against DIR/amsgd, JOBS tests at a time, and fails when a test
# fails or crashes (an ASan or UBSan error aborts its worker) or when LeakSanitizer reports a
# leak with a frame in the project's code (scripts/san-leaks.awk: Criterion itself passes a
# test whose worker leaks). The runner's own leak of a few bytes per parallel job, the only
# report whose frames are all in libcriterion, makes the runner exit with LeakSanitizer's
# status (set to 23 here: under AddressSanitizer it would be 1, like any other error); that
# alone is not a failure. FILTER: a Criterion --filter pattern. The tests' times go to
# DIR/san-tap.txt (TAP).
set -u
dir=$1 jobs=$2 filter=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
args=(--jobs "$jobs" --tap="$dir/san-tap.txt")
[ -n "$filter" ] && args+=(--filter "$filter")
AMSGD=$(cd "$dir" && pwd)/amsgd ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=exitcode=23 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$dir/test_amsgd" "${args[@]}" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
awk -f "$here/scripts/san-leaks.awk" "$log"
leaks=$?
synth=$(grep 'Synthesis:' "$log" | tail -n 1)
if [ "$leaks" -ne 0 ]; then echo "san-test: the project's code leaks (above)" >&2; exit 1; fi
if ! grep -q 'Failing: 0 | Crashing: 0' <<<"$synth"; then echo "san-test: $synth" >&2; exit 1; fi
if [ "$rc" -ne 0 ] && [ "$rc" -ne 23 ]; then echo "san-test: the runner exited $rc" >&2; exit 1; fi
exit 0
