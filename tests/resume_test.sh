#!/usr/bin/env bash
# resume_test.sh -- a checkpointed sweep survives SIGKILL and SIGINT: a sweep is killed
# mid-way, resumed with --resume, and its output compared byte for byte with an
# uninterrupted run; a torn last checkpoint line is tolerated; a checkpoint written with
# other parameters is refused (exit 2).
# The interrupted runs pause PAUSE_MS after each checkpointed cell (AMSGD_TEST_CELL_PAUSE_MS),
# so that a signal sent after the first cells lands mid-sweep on a machine of any speed.
# Usage: tests/resume_test.sh [path/to/amsgd]   (default build/amsgd); runs in < 30 s.
set -u
BIN=${1:-${AMSGD:-build/amsgd}}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }

ARGS=(phase --mu-grid 0.8,0.9 --tau-grid 0:30:6 --replicas 48 --time 4 --grid 41
      --threads 1 --format json --quiet)
NCELLS=12
PAUSE_MS=300 # 9 pauses after the third cell: 2.7 s at least before the sweep could end

"$BIN" "${ARGS[@]}" -o "$TMP/full.json" || { echo "FAIL: reference run"; exit 1; }

cells() { if [ -f "$1" ]; then grep -c '"cell"' "$1" || true; else echo 0; fi; }

# wait until the checkpoint $1 holds at least $2 cells (or the process $3 ended)
wait_cells() {
    for _ in $(seq 1 600); do
        [ "$(cells "$1")" -ge "$2" ] && return 0
        kill -0 "$3" 2>/dev/null || return 1
        sleep 0.02
    done
    return 1
}

# 1. SIGKILL mid-way, then --resume
AMSGD_TEST_CELL_PAUSE_MS=$PAUSE_MS "$BIN" "${ARGS[@]}" --checkpoint "$TMP/k.ckpt" -o "$TMP/k.json" &
pid=$!
if wait_cells "$TMP/k.ckpt" 3 "$pid"; then
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    n=$(cells "$TMP/k.ckpt")
    if [ "$n" -lt "$NCELLS" ] && [ ! -f "$TMP/k.json" ]; then
        ok "SIGKILL after $n of $NCELLS cells, no output written"
    else
        bad "SIGKILL came too late ($n cells) or output exists"
    fi
else
    bad "sweep ended before it could be killed"
fi
"$BIN" "${ARGS[@]}" --checkpoint "$TMP/k.ckpt" --resume -o "$TMP/k.json"
if cmp -s "$TMP/full.json" "$TMP/k.json"; then ok "resumed after SIGKILL: identical output"
else bad "resumed after SIGKILL: output differs"; fi
[ "$(cells "$TMP/k.ckpt")" -eq "$NCELLS" ] && ok "checkpoint holds every cell once" ||
    bad "checkpoint has $(cells "$TMP/k.ckpt") cell lines, expected $NCELLS"

# 2. SIGINT stops cleanly (exit 130, checkpoint kept), then --resume
AMSGD_TEST_CELL_PAUSE_MS=$PAUSE_MS "$BIN" "${ARGS[@]}" --checkpoint "$TMP/i.ckpt" -o "$TMP/i.json" \
    2>"$TMP/i.err" &
pid=$!
if wait_cells "$TMP/i.ckpt" 2 "$pid"; then
    kill -INT "$pid"
    wait "$pid" 2>/dev/null
    rc=$?
    [ "$rc" -eq 130 ] && [ ! -f "$TMP/i.json" ] && ok "SIGINT: exit 130, no output" ||
        bad "SIGINT: exit $rc"
else
    bad "sweep ended before SIGINT"
fi
"$BIN" "${ARGS[@]}" --checkpoint "$TMP/i.ckpt" --resume -o "$TMP/i.json"
cmp -s "$TMP/full.json" "$TMP/i.json" && ok "resumed after SIGINT: identical output" ||
    bad "resumed after SIGINT: output differs"

# 3. a torn last line (kill during its write) is dropped and recomputed
head -n 4 "$TMP/k.ckpt" > "$TMP/t.ckpt"
sed -n 5p "$TMP/k.ckpt" | head -c 25 >> "$TMP/t.ckpt"
"$BIN" "${ARGS[@]}" --checkpoint "$TMP/t.ckpt" --resume -o "$TMP/t.json"
cmp -s "$TMP/full.json" "$TMP/t.json" && ok "torn last line: identical output" ||
    bad "torn last line: output differs"

# 4. other parameters: refused with exit 2 and one line on stderr, nothing on stdout
"$BIN" phase --mu-grid 0.8,0.9 --tau-grid 0:30:6 --replicas 49 --time 4 --grid 41 \
    --threads 1 --format json --quiet --checkpoint "$TMP/k.ckpt" --resume \
    >"$TMP/m.out" 2>"$TMP/m.err"
rc=$?
if [ "$rc" -eq 2 ] && [ ! -s "$TMP/m.out" ] && [ "$(wc -l <"$TMP/m.err")" -eq 1 ]; then
    ok "mismatched checkpoint refused (exit 2)"
else
    bad "mismatched checkpoint: exit $rc"
fi

echo "resume_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
