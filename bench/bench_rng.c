/*
 * bench_rng.c -- cost of the random numbers of am_rng.h: ns per 64-bit word and per
 * standard normal, for the scalar calls (am_rng_u64, am_rng_gaussian) and the bulk calls
 * (am_rng_fill_u64, am_rng_fill_gaussian), drawing n numbers per step as the Monte Carlo
 * kernel does; then normals of many steps at once (am_rng_fill_gaussian_steps) and of 8
 * streams side by side (am_rng_gaussian_lanes, as the replica-batched kernel draws them), and
 * bulk normals with a sum of n terms carried alongside (am_rng_fill_gaussian_sum, as the
 * one-replica kernel draws long steps). Each figure is the minimum over repetitions (robust
 * on a loaded machine).
 * Output: one row per case "name n ns_per_number".
 * Usage: bench_rng [numbers_per_repetition [repetitions [case 0..6]]]
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

enum { SCALAR_U64, BULK_U64, SCALAR_GAUSS, BULK_GAUSS, STEPS_GAUSS, LANES_GAUSS, SUM_GAUSS, NKIND };

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
        case BULK_GAUSS:
            am_rng_fill_gaussian(&r, g, n);
            acc += g[k % n];
            break;
        case SUM_GAUSS: /* with the sum of n given terms alongside (the kernel's x . w) */
            acc += am_rng_fill_gaussian_sum(&r, g, n, g + 1000, n, 0.0);
            break;
        default:
            break;
        }
    }
    if (kind == STEPS_GAUSS) {
        /* the steps of one stream side by side, 1000 normals per call */
        size_t per = 1000 / n;
        for (uint64_t k = 0; k < steps; k += per) {
            size_t m = steps - k < per ? (size_t)(steps - k) : per;
            am_rng_fill_gaussian_steps(&r, k, m, n, g);
            acc += g[k % n];
        }
    } else if (kind == LANES_GAUSS) {
        /* AM_RNG_LANES streams side by side, steps / AM_RNG_LANES steps each */
        am_rng lanes[AM_RNG_LANES];
        for (int l = 0; l < AM_RNG_LANES; l++)
            am_rng_init(&lanes[l], 1, (uint64_t)l, 0, 0);
        size_t per = 1000 / (n * AM_RNG_LANES);
        if (per == 0) per = 1;
        uint64_t ls = steps / AM_RNG_LANES;
        for (uint64_t k = 0; k < ls; k += per) {
            size_t m = ls - k < per ? (size_t)(ls - k) : per;
            am_rng_gaussian_lanes(lanes, k, m, n, g, 2);
            acc += g[k % n];
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
    int only = argc > 3 ? atoi(argv[3]) : -1; /* run one case only (0..6), e.g. under callgrind */
    const size_t ns[] = {4, 100, 1000};
    const char *names[] = {"u64_scalar",  "u64_bulk",    "gauss_scalar", "gauss_bulk",
                           "gauss_steps", "gauss_lanes", "gauss_sum"};
    double sink = 0;
    double *buf = calloc(100 * 1000, sizeof(double)); /* lanes: 8 x n x steps */
    printf("# case n ns_per_number (min of %d repetitions of %.3g numbers)\n", reps, budget);
    for (int kind = 0; kind < NKIND; kind++)
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
