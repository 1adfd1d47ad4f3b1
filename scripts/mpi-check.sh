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
# without -g: debug information changes no instruction and is a third of the compile time
make --no-print-directory MPI=1 CFLAGS=-O2 build-mpi/amsgd >/dev/null
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
# a help text is printed once, by rank 0
nhelp=$(mpirun --oversubscribe -np 2 build-mpi/amsgd mc --help 2>/dev/null | grep -c '^usage: amsgd mc')
extra=$((extra + 1))
if [ "$nhelp" -eq 1 ]; then echo "ok: --help on 2 ranks: printed once"
else echo "FAIL: --help on 2 ranks: printed $nhelp times"; fail=$((fail + 1)); fi
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
AMSGD_TEST_CELL_PAUSE_MS=500 mpirun --oversubscribe -np 2 -x AMSGD_TEST_CELL_PAUSE_MS \
    build-mpi/amsgd "${LONG[@]}" --checkpoint "$TMP/int.ckpt" -o "$TMP/int.json" 2>"$TMP/int.err" &
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

# ---- every ensemble command and the work queue of the sweeps ----------------------------------
# mc, sde, compare, converge and validate split the replicas of each ensemble over the ranks
# (rounds of chunks, merged on rank 0 in chunk order): 1, 2 and 3 ranks (3 oversubscribes the 2
# cores of CI) against the serial build byte for byte; mc also with 2 threads per rank. The
# sizes span more than one round (2048 replicas per rank and round). phase and knee take their
# cells from rank 0's work queue: 3 ranks against serial, a 3-rank checkpoint cut short and
# resumed on 2 ranks, and the knee's memory refusal on 2 ranks (exit 2, one message).
ens_fail=0
ens_n=0
ens_same() { # NAME FILE-A FILE-B
    ens_n=$((ens_n + 1))
    if [ -s "$2" ] && cmp -s "$2" "$3"; then echo "ok: $1"
    else echo "FAIL: $1 differs from serial"; ens_fail=$((ens_fail + 1)); fi
}
ENS_CASES=(
    "mc|mc --replicas 7000 --time 1 --grid 11 --mu 0.5 --delay uniform:4 --coords --format json"
    "sde|sde --eta 1e-3 --mu 0.5 --time 2 --grid 21 --replicas 5000 --format json"
    "sde-ou|sde --model ou --mu 0.9 --eta 1e-3 --time 2 --replicas 3000 --format json"
    "compare|compare --eta 1e-3 --mu 0.5 --time 2 --grid 21 --replicas 3000 --format json"
    "converge|converge --mu 0.5 --etas 2e-3,1e-3,5e-4 --time 1 --replicas 3000 --sde --format json"
    "validate-sde|validate --quick --only sde --no-power --format json"
    "validate-ode-order|validate --quick --only ode-order --no-power --format json"
)
for c in "${ENS_CASES[@]}"; do
    name=${c%%|*}
    read -r -a cmd <<< "${c#*|}"
    set +e # validate exits 1 on a failing row: the bytes are compared, not the verdict
    build/amsgd "${cmd[@]}" --threads 1 > "$TMP/$name-serial.out" 2>/dev/null
    for np in 1 2 3; do
        mpirun --oversubscribe -np "$np" build-mpi/amsgd "${cmd[@]}" --threads 1 \
            > "$TMP/$name-np$np.out" 2>/dev/null
    done
    set -e
    for np in 1 2 3; do ens_same "$name on $np rank(s) equals serial" "$TMP/$name-serial.out" \
        "$TMP/$name-np$np.out"; done
done
read -r -a cmd <<< "${ENS_CASES[0]#*|}"
mpirun --oversubscribe -np 2 build-mpi/amsgd "${cmd[@]}" --threads 2 > "$TMP/mc-np2-t2.out"
ens_same "mc on 2 ranks x 2 threads equals serial" "$TMP/mc-serial.out" "$TMP/mc-np2-t2.out"
# diverging replicas: the same bytes and the warning once, from rank 0
DIV=(mc --replicas 3000 --eta 0.05 --mu 0.9 --time 2 --grid 11 --format json --threads 1)
build/amsgd "${DIV[@]}" > "$TMP/div-serial.out" 2>/dev/null
mpirun --oversubscribe -np 3 build-mpi/amsgd "${DIV[@]}" > "$TMP/div-np3.out" 2> "$TMP/div.err"
ens_same "mc with diverged replicas on 3 ranks equals serial" "$TMP/div-serial.out" \
    "$TMP/div-np3.out"
ens_n=$((ens_n + 1))
if [ "$(grep -c 'replicas diverged' "$TMP/div.err")" -eq 1 ]; then
    echo "ok: the divergence warning is printed once on 3 ranks"
else echo "FAIL: divergence warning printed $(grep -c 'replicas diverged' "$TMP/div.err") times"
    ens_fail=$((ens_fail + 1)); fi
# the work queue: 3 ranks (rank 0 computes too), a cut checkpoint resumed on 2 ranks
mpirun --oversubscribe -np 3 build-mpi/amsgd "${ARGS[@]}" --checkpoint "$TMP/q.ckpt" \
    -o "$TMP/queue-np3.json"
ens_same "phase from the work queue on 3 ranks equals serial" "$TMP/serial.json" \
    "$TMP/queue-np3.json"
ens_n=$((ens_n + 1))
ncell=$(tail -n +2 "$TMP/q.ckpt" | sed 's/.*"cell":\([0-9]*\).*/\1/' | sort -un | wc -l)
if [ "$ncell" -eq 15 ] && [ "$(wc -l < "$TMP/q.ckpt")" -eq 16 ]; then
    echo "ok: the 3-rank checkpoint holds each of the 15 cells once"
else echo "FAIL: the 3-rank checkpoint holds $ncell distinct cells in $(wc -l < "$TMP/q.ckpt") lines"
    ens_fail=$((ens_fail + 1)); fi
head -n 9 "$TMP/q.ckpt" > "$TMP/q2.ckpt"
mpirun --oversubscribe -np 2 build-mpi/amsgd "${ARGS[@]}" --checkpoint "$TMP/q2.ckpt" --resume \
    -o "$TMP/queue-resume.json"
ens_same "phase resumed on 2 ranks from a 3-rank checkpoint equals serial" "$TMP/serial.json" \
    "$TMP/queue-resume.json"
mpirun --oversubscribe -np 3 build-mpi/amsgd "${KNEE[@]}" -o "$TMP/knee-np3.json"
ens_same "knee from the work queue on 3 ranks equals serial" "$TMP/knee-serial.json" \
    "$TMP/knee-np3.json"
set +e
mpirun --oversubscribe -np 2 build-mpi/amsgd knee --replicas 30000000 --tau-max 64 --quiet \
    > /dev/null 2> "$TMP/knee-mem.err"
rc=$?
set -e
ens_n=$((ens_n + 1))
if [ "$rc" -eq 2 ] && [ "$(grep -c '^amsgd: ' "$TMP/knee-mem.err")" -eq 1 ] &&
    grep -q 'above the limit' "$TMP/knee-mem.err"; then
    echo "ok: knee over the memory limit on 2 ranks: exit 2, one message, before any cell"
else echo "FAIL: knee over the memory limit on 2 ranks: exit $rc"; ens_fail=$((ens_fail + 1)); fi
echo "mpi-check (ensembles, work queue): $((ens_n - ens_fail)) passed, $ens_fail failed"
[ "$ens_fail" -eq 0 ]
