#!/usr/bin/env bash
# bench-scaling.sh -- strong scaling of one ensemble (docs/mpi.md): `amsgd mc` on 10^5 replicas
# (d = 4, Gaussian, constant delay 8, mu = 0.9) with 1 and 2 OpenMP threads (serial build) and
# with 1 and 2 MPI ranks of one thread each (build-mpi/), the four runs alternated REPS times so
# that a change of the machine's load hits all of them alike. Prints the wall and CPU times
# (median, min, max), the speed-up of each repetition's pair (median and range), the ratio of
# the fastest runs and 2 CPU(1)/CPU(2) (the speed-up an idle machine would allow if the extra
# CPU seconds are the only cost) against the targets (2 threads >= 1.9x, 2 ranks >= 1.8x), the
# load average before and after, and checks that all four outputs are the same bytes.
#
# With --validate it measures instead what a cluster run of the full `amsgd validate` needs:
# each check alone (`--only NAME`, full sizes) serially and on 2 ranks, one thread each; the
# CPU seconds of the two runs give the part of the check that the ranks split (the ensembles)
# and the part every rank repeats (closed forms, ODE/DDE solves, non-ensemble simulations).
#
# Usage: scripts/bench-scaling.sh [REPS [REPLICAS [TIME]]]   (make bench-scaling)
#        scripts/bench-scaling.sh --validate [OUT.tsv]     (then the estimate for P ranks)
#        scripts/bench-scaling.sh --validate-report OUT.tsv
set -euo pipefail
cd "$(dirname "$0")/.."

# Runs a command, appends "label wall user+sys" to $TMP/times.
timed() {
    local label=$1
    shift
    /usr/bin/time -f "%e %U %S" -o "$TMP/t" "$@" > "$TMP/$label.out" 2>/dev/null || true
    read -r wall usr sys < "$TMP/t"
    echo "$label $wall $(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')" >> "$TMP/times"
}

# The cluster estimate from a --validate table: per check, the CPU seconds the two ranks spent
# beyond the serial run are the repeated part Crep, the rest Cs = C1 - Crep is split, and
# P ranks of one thread need about Cs / P + Crep.
validate_report() {
    /usr/bin/python3 - "$1" <<'EOF2'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if not l.startswith("#")]
head, rows = rows[0], rows[1:]
P = [1, 2, 8, 32, 128]
print("| check | rows | CPU s serial | CPU s on 2 ranks | repeated s | split s | same bytes | " +
      " | ".join(f"{p} ranks s" for p in P) + " |")
print("|---|---" * 1 + "|---" * (5 + len(P)) + "|")
tot = [0.0] * len(P); c1t = c2t = rept = 0.0
for r in rows:
    name, nrow, c1, w1, c2, w2, same = r[0], r[1], float(r[2]), r[3], float(r[4]), r[5], r[6]
    rep = min(max(c2 - c1, 0.0), c1); sp = c1 - rep
    est = [sp / p + rep for p in P]
    tot = [a + b for a, b in zip(tot, est)]; c1t += c1; c2t += c2; rept += rep
    print(f"| {name} | {nrow} | {c1:.1f} | {c2:.1f} | {rep:.1f} | {sp:.1f} | {same} | " +
          " | ".join(f"{e:.1f}" for e in est) + " |")
print(f"| all | | {c1t:.1f} | {c2t:.1f} | {rept:.1f} | {c1t - rept:.1f} | | " +
      " | ".join(f"{e:.1f}" for e in tot) + " |")
EOF2
}

if [ "${1:-}" = "--validate-report" ]; then
    validate_report "$2"
    exit 0
fi

scripts/install-deps.sh --mpi >/dev/null
make --no-print-directory build/amsgd >/dev/null
make --no-print-directory MPI=1 build-mpi/amsgd >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
MPIRUN=(mpirun --oversubscribe --bind-to none)

if [ "${1:-}" = "--validate" ]; then
    out=${2:-/dev/stdout}
    echo "# $(date -u +%FT%TZ) $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)" > "$out"
    printf 'check\trows\tcpu_serial\twall_serial\tcpu_2ranks\twall_2ranks\tsame_bytes\n' >> "$out"
    for name in $(build/amsgd validate --list | awk '{print $1}'); do
        : > "$TMP/times"
        timed s build/amsgd validate --only "$name" --threads 1 --format json
        timed m "${MPIRUN[@]}" -np 2 build-mpi/amsgd validate --only "$name" --threads 1 \
            --format json
        rows=$(grep -c '"name"' "$TMP/s.out" || true)
        same=no
        if [ -s "$TMP/s.out" ] && cmp -s "$TMP/s.out" "$TMP/m.out"; then same=yes; fi
        read -r _ ws cs < <(sed -n 1p "$TMP/times")
        read -r _ wm cm < <(sed -n 2p "$TMP/times")
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$rows" "$cs" "$ws" "$cm" "$wm" "$same" \
            >> "$out"
    done
    echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out"
    [ "$out" = /dev/stdout ] || validate_report "$out"
    exit 0
fi

REPS=${1:-5}
REPLICAS=${2:-100000}
T=${3:-1}
ARGS=(mc --replicas "$REPLICAS" --time "$T" --grid 11 --mu 0.9 --delay const:8 --format json)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
: > "$TMP/times"
"${MPIRUN[@]}" -np 2 build-mpi/amsgd --version > /dev/null # warm the launcher
for rep in $(seq "$REPS"); do
    timed threads1 build/amsgd "${ARGS[@]}" --threads 1
    timed threads2 build/amsgd "${ARGS[@]}" --threads 2
    timed ranks1 "${MPIRUN[@]}" -np 1 build-mpi/amsgd "${ARGS[@]}" --threads 1
    timed ranks2 "${MPIRUN[@]}" -np 2 build-mpi/amsgd "${ARGS[@]}" --threads 1
    timed launch2 "${MPIRUN[@]}" -np 2 build-mpi/amsgd --version
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
same=yes
for c in threads2 ranks1 ranks2; do cmp -s "$TMP/threads1.out" "$TMP/$c.out" || same=no; done
[ -s "$TMP/threads1.out" ] || same=no
echo "mc --replicas $REPLICAS --time $T (d = 4, eta 5e-4: $T / eta steps per replica):" \
    "$REPS alternated repetitions on $(nproc) cores"
echo "load average before: $load0; after: $load1; outputs identical: $same"
/usr/bin/python3 - "$TMP/times" <<'EOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
t = {}
for lab, wall, cpu in rows:
    t.setdefault(lab, []).append((float(wall), float(cpu)))
print("| run | wall s median [min, max] | CPU s median |")
print("|---|---|---|")
names = {"threads1": "1 thread", "threads2": "2 threads", "ranks1": "1 rank (mpirun -np 1)",
         "ranks2": "2 ranks (mpirun -np 2)", "launch2": "mpirun -np 2 amsgd --version"}
for lab in ["threads1", "threads2", "ranks1", "ranks2", "launch2"]:
    w = [x[0] for x in t[lab]]; c = [x[1] for x in t[lab]]
    print(f"| {names[lab]} | {st.median(w):.2f} [{min(w):.2f}, {max(w):.2f}] | {st.median(c):.2f} |")
print()
print("| speed-up | per repetition: median [min, max] | of the fastest runs | 2 CPU(1) / CPU(2) | target | met (median) |")
print("|---|---|---|---|---|---|")
for a, b, target, name in [("threads1", "threads2", 1.9, "2 threads / 1 thread"),
                           ("ranks1", "ranks2", 1.8, "2 ranks / 1 rank")]:
    r = [x[0] / y[0] for x, y in zip(t[a], t[b])]
    m = st.median(r)
    best = min(x[0] for x in t[a]) / min(y[0] for y in t[b])
    cpu = 2 * st.median(x[1] for x in t[a]) / st.median(y[1] for y in t[b])
    print(f"| {name} | {m:.2f} [{min(r):.2f}, {max(r):.2f}] | {best:.2f} | {cpu:.2f} | >= {target} | {'yes' if m >= target else 'no'} |")
EOF
