#!/usr/bin/env bash
# san_leaks_test.sh -- scripts/san-leaks.awk fails on a LeakSanitizer report with a frame in
# the project's code and passes on the Criterion runner's own leak (tests/data/san: real
# reports, one of a test that leaked 100 bytes on purpose, one of the runner with 2 jobs).
set -u
cd "$(dirname "$0")/.."
pass=0
fail=0
if awk -f scripts/san-leaks.awk tests/data/san/own-leak.log >/dev/null; then
    echo "FAIL: a leak in tests/ passed"; fail=$((fail + 1))
else echo "ok: a leak in the project's code fails"; pass=$((pass + 1)); fi
if awk -f scripts/san-leaks.awk tests/data/san/runner-leak.log >/dev/null 2>&1; then
    echo "ok: the runner's own leak passes"; pass=$((pass + 1))
else echo "FAIL: the runner's own leak failed"; fail=$((fail + 1)); fi
cat tests/data/san/runner-leak.log tests/data/san/own-leak.log > "${TMPDIR:-/tmp}/san-both.$$"
if awk -f scripts/san-leaks.awk "${TMPDIR:-/tmp}/san-both.$$" >/dev/null 2>&1; then
    echo "FAIL: a project leak after a runner leak passed"; fail=$((fail + 1))
else echo "ok: a project leak after a runner leak fails"; pass=$((pass + 1)); fi
rm -f "${TMPDIR:-/tmp}/san-both.$$"
echo "san_leaks_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
