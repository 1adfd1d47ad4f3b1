#!/usr/bin/env bash
# mpi-check.sh -- builds the MPI binary into build-mpi/ (make MPI=1), runs a tiny phase sweep
# on 2 ranks with mpirun and checks that its output equals the serial build's byte for byte
# (also with a checkpoint, whose resume must give the same bytes), and the same for a tiny knee;
# a checkpoint of other parameters is refused on 2 ranks with exit 2 and one message; the same
# for a tiny tradeoff sweep on the IDX fixture (plain and resumed).
# Usage: scripts/mpi-check.sh   (from the repository root; installs libopenmpi-dev if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --mpi
make --no-print-directory build/amsgd >/dev/null
make --no-print-directory MPI=1 build-mpi/amsgd >/dev/null
# Open MPI refuses root without these; CI runs as root on 2 cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ARGS=(phase --mu-grid 0.8,0.9,0.95 --tau-grid 0:40:5 --replicas 32 --time 3 --grid 31
      --threads 1 --format json --quiet)
build/amsgd "${ARGS[@]}" -o "$TMP/serial.json"
mpirun --oversubscribe -np 2 build-mpi/amsgd "${ARGS[@]}" -o "$TMP/mpi.json"
mpirun --oversubscribe -np 2 build-mpi/amsgd "${ARGS[@]}" --checkpoint "$TMP/c.ckpt" \
    -o "$TMP/mpi-ckpt.json"
head -n 6 "$TMP/c.ckpt" > "$TMP/c2.ckpt"
mpirun --oversubscribe -np 2 build-mpi/amsgd "${ARGS[@]}" --checkpoint "$TMP/c2.ckpt" --resume \
    -o "$TMP/mpi-resume.json"
KNEE=(knee --mus 0.8,0.9,0.95 --replicas 16 --time 2 --grid 11 --bootstrap 20 --threads 1
      --format json --quiet)
build/amsgd "${KNEE[@]}" -o "$TMP/knee-serial.json"
mpirun --oversubscribe -np 2 build-mpi/amsgd "${KNEE[@]}" -o "$TMP/knee-mpi.json"
# tradeoff: the (P, mu) cells of a tiny network sweep on the IDX fixture, plain and resumed
TRADE=(tradeoff --data "idx:$PWD/tests/data/idx-tiny" --model mlp:4 --workers 1,2,4
       --mus 0.3,0.6,0.9 --batch 4 --budget 40 --seeds 3 --threads 1 --format json --quiet)
build/amsgd "${TRADE[@]}" -o "$TMP/trade-serial.json"
mpirun --oversubscribe -np 2 build-mpi/amsgd "${TRADE[@]}" --checkpoint "$TMP/t.ckpt" \
    -o "$TMP/trade-mpi.json"
head -n 5 "$TMP/t.ckpt" > "$TMP/t2.ckpt"
mpirun --oversubscribe -np 2 build-mpi/amsgd "${TRADE[@]}" --checkpoint "$TMP/t2.ckpt" --resume \
    -o "$TMP/trade-resume.json"
fail=0
for f in trade-mpi trade-resume; do
    if cmp -s "$TMP/trade-serial.json" "$TMP/$f.json"; then echo "ok: $f equals serial"
    else echo "FAIL: $f differs from serial"; fail=$((fail + 1)); fi
done
# a checkpoint of other parameters: exit 2 and one message, as in the serial build
set +e
mpirun --oversubscribe -np 2 build-mpi/amsgd "${ARGS[@]}" --seed 7 --checkpoint "$TMP/c.ckpt" \
    --resume -o "$TMP/mismatch.json" 2>"$TMP/mismatch.err"
rc=$?
set -e
if [ "$rc" -eq 2 ] && [ "$(grep -c '^amsgd: ' "$TMP/mismatch.err")" -eq 1 ]; then
    echo "ok: mismatched checkpoint on 2 ranks: exit 2, one message"
else echo "FAIL: mismatched checkpoint on 2 ranks: exit $rc"; fail=$((fail + 1)); fi
if cmp -s "$TMP/knee-serial.json" "$TMP/knee-mpi.json"; then echo "ok: knee on 2 ranks equals serial"
else echo "FAIL: knee on 2 ranks differs from serial"; fail=$((fail + 1)); fi
for f in mpi mpi-ckpt mpi-resume; do
    if cmp -s "$TMP/serial.json" "$TMP/$f.json"; then echo "ok: $f equals serial"
    else echo "FAIL: $f differs from serial"; fail=$((fail + 1)); fi
done
# One message per failure, not one per rank, and the serial exit statuses: a bad flag, an
# unwritable checkpoint, a checkpoint with a corrupted line (checksum) all exit 2 with one
# "amsgd: " line (mpirun's own banner aside).
extra=0
one_message() { # NAME EXPECTED-RC ARGS...
    local name=$1 want=$2 rc
    shift 2
    set +e
    mpirun --oversubscribe -np 2 build-mpi/amsgd "$@" >/dev/null 2>"$TMP/one.err"
    rc=$?
    set -e
    extra=$((extra + 1))
    if [ "$rc" -eq "$want" ] && [ "$(grep -c '^amsgd: ' "$TMP/one.err")" -eq 1 ]; then
        echo "ok: $name on 2 ranks: exit $rc, one message"
    else
        echo "FAIL: $name on 2 ranks: exit $rc (expected $want), $(grep -c '^amsgd: ' \
            "$TMP/one.err") messages"
        fail=$((fail + 1))
    fi
}
one_message "bad flag" 2 phase --mu-grid 0.5,,0.9
one_message "unwritable checkpoint" 2 "${ARGS[@]}" --checkpoint /nonexistent/dir/c.ckpt
sed '2s/"values":\[\(.\)/"values":[9\1/' "$TMP/c.ckpt" > "$TMP/corrupt.ckpt"
if cmp -s "$TMP/c.ckpt" "$TMP/corrupt.ckpt"; then
    echo "FAIL: could not corrupt the checkpoint"; fail=$((fail + 1))
fi
one_message "corrupted checkpoint" 2 "${ARGS[@]}" --checkpoint "$TMP/corrupt.ckpt" --resume \
    -o "$TMP/corrupt.json"
# SIGINT to mpirun (Open MPI sends SIGTERM to every rank, SIGKILL a few seconds later): the
# ranks stop within a saved time, rank 0 prints "interrupted after N of M cells" once, the
# checkpoint keeps the finished cells and a resume gives the serial bytes. mpirun's exit
# status is its own (nonzero; Open MPI 4 gives 1), each rank exits 130.
LONG=(phase --mu-grid 0.5,0.7,0.9 --tau-grid 0:20:6 --replicas 2000 --time 50 --grid 21
      --threads 1 --format json --quiet)
build/amsgd "${LONG[@]}" -o "$TMP/long-serial.json"
set +e
mpirun --oversubscribe -np 2 build-mpi/amsgd "${LONG[@]}" --checkpoint "$TMP/int.ckpt" \
    -o "$TMP/int.json" 2>"$TMP/int.err" &
mp=$!
# interrupt once two cells are in the checkpoint (at most 60 s)
for _ in $(seq 600); do
    [ "$(cat "$TMP/int.ckpt" 2>/dev/null | wc -l)" -ge 3 ] && break
    sleep 0.1
done
kill -INT "$mp"
wait "$mp"
rc=$?
set -e
extra=$((extra + 1))
if [ "$rc" -ne 0 ] && [ "$(grep -c '^amsgd: interrupted after' "$TMP/int.err")" -eq 1 ] &&
    [ "$(grep -c '^amsgd: ' "$TMP/int.err")" -eq 1 ] && [ ! -e "$TMP/int.json" ]; then
    echo "ok: SIGINT on 2 ranks: one 'interrupted' line ($(grep '^amsgd: ' "$TMP/int.err"))"
else
    echo "FAIL: SIGINT on 2 ranks: exit $rc, stderr: $(tr '\n' ' ' < "$TMP/int.err")"
    fail=$((fail + 1))
fi
mpirun --oversubscribe -np 2 build-mpi/amsgd "${LONG[@]}" --checkpoint "$TMP/int.ckpt" \
    --resume -o "$TMP/int.json"
extra=$((extra + 1))
if cmp -s "$TMP/long-serial.json" "$TMP/int.json"; then echo "ok: resumed after SIGINT equals serial"
else echo "FAIL: resumed after SIGINT differs from serial"; fail=$((fail + 1)); fi
echo "mpi-check: $((7 + extra - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
