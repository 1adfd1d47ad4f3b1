/*
 * bench_rng.c -- cost of the random numbers of am_rng.h: ns per 64-bit word and per
 * standard normal, for the scalar calls (am_rng_u64, am_rng_gaussian) and the bulk calls
 * (am_rng_fill_u64, am_rng_fill_gaussian), drawing n numbers per step as the Monte Carlo
 * kernel does. Each figure is the minimum over repetitions (robust on a loaded machine).
 * Output: one row per case "name n ns_per_number".
 * Usage: bench_rng [numbers_per_repetition [repetitions [case 0..3]]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../core/am_rng.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { SCALAR_U64, BULK_U64, SCALAR_GAUSS, BULK_GAUSS };

/* Seconds for `steps` steps of n draws of the given kind. */
static double run(int kind, size_t n, uint64_t steps, void *buf, double *sink)
{
    am_rng r;
    am_rng_init(&r, 1, 0, 0, 0);
    uint64_t *w = buf;
    double *g = buf, acc = 0;
    double t0 = now();
    for (uint64_t k = 0; k < steps; k++) {
        am_rng_seek(&r, k);
        switch (kind) {
        case SCALAR_U64:
            for (size_t i = 0; i < n; i++)
                w[i] = am_rng_u64(&r);
            acc += (double)(w[k % n] >> 11);
            break;
        case BULK_U64:
            am_rng_fill_u64(&r, w, n);
            acc += (double)(w[k % n] >> 11);
            break;
        case SCALAR_GAUSS:
            for (size_t i = 0; i < n; i++)
                g[i] = am_rng_gaussian(&r);
            acc += g[k % n];
            break;
        default:
            am_rng_fill_gaussian(&r, g, n);
            acc += g[k % n];
            break;
        }
    }
    double t = now() - t0;
    *sink += acc;
    return t;
}

int main(int argc, char **argv)
{
    double budget = argc > 1 ? atof(argv[1]) : 2e6; /* numbers per repetition */
    int reps = argc > 2 ? atoi(argv[2]) : 15;
    int only = argc > 3 ? atoi(argv[3]) : -1; /* run one case only (0..3), e.g. under callgrind */
    const size_t ns[] = {4, 100, 1000};
    const char *names[] = {"u64_scalar", "u64_bulk", "gauss_scalar", "gauss_bulk"};
    double sink = 0;
    void *buf = malloc(1000 * sizeof(double));
    printf("# case n ns_per_number (min of %d repetitions of %.3g numbers)\n", reps, budget);
    for (int kind = 0; kind < 4; kind++)
        for (size_t ni = 0; ni < 3; ni++) {
            size_t n = ns[ni];
            if (only >= 0 && only != kind) continue;
            uint64_t steps = (uint64_t)(budget / (double)n);
            double best = 1e30;
            for (int rep = 0; rep < reps; rep++) {
                double t = run(kind, n, steps, buf, &sink);
                if (t < best) best = t;
            }
            printf("%s %zu %.3f\n", names[kind], n, 1e9 * best / ((double)steps * (double)n));
            fflush(stdout);
        }
    free(buf);
    if (sink == 12345.0) puts("");
    return 0;
}
