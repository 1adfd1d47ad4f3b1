/*
 * bench_mc.c -- cost of the Monte Carlo kernel per coordinate-step, against drawing the
 * same random numbers alone, the one-replica path, and the speed-up from 1 to 2 threads.
 *
 * For d in {4, 100, 1000} and gaussian/rademacher data it runs the Async-MSGD ensemble
 * (constant delay 8, mu = 0.9, eta = 1e-4) for R replicas x N steps and reports
 *   kernel_ns  = CPU time / (R N d)  on 1 thread, default path (replicas side by side
 *                for d <= 16),
 *   scalar_ns  = the same with one replica at a time (am_msgd_set_path 0),
 *   rng_ns     = the same per-coordinate cost of am_data_draw alone (same streams),
 *   ratio      = kernel_ns / rng_ns,
 *   speedup    = wall time(1 thread) / wall time(2 threads) (t1_s, t2_s: wall times), and
 *                whether the outputs of the three
 *                runs (default, one replica at a time, 2 threads) are identical.
 * Each time is the minimum over REPS repetitions (default 1), robust on a loaded machine.
 * Usage: bench_mc [coordinate_steps_per_measurement [REPS]]
 * Output: one whitespace-separated row per case (machine-readable for scripts/bench.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/am_grid.h"
#include "../montecarlo/am_data.h"
#include "../montecarlo/am_msgd.h"

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wall time for 2 threads; for 1 thread the CPU time of the calling thread, which runs the
 * whole ensemble then (robust against other processes on a shared machine). */
static double now_for(int threads)
{
    return clock_s(threads == 1 ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC);
}

static double run(const am_problem *p, size_t R, uint64_t N, int threads, int scalar,
                  am_ensemble_result **out, double *wall)
{
    am_msgd_params par = am_msgd_params_default();
    par.eta = 1e-4;
    par.mu = 0.9;
    am_delay_make(AM_DELAY_CONST, 8, &par.delay);
    am_status st;
    am_msgd *m = am_msgd_alloc(p, &par, &st, NULL, 0);
    if (scalar) am_msgd_set_path(m, 0);
    uint64_t k[2] = {0, N};
    am_ensemble_params ep = {R, threads, 0};
    double t0 = now_for(threads), w0 = clock_s(CLOCK_MONOTONIC);
    if (am_ensemble_run(am_msgd_model(m), k, 2, &ep, out) != AM_OK) {
        fprintf(stderr, "bench_mc: ensemble failed\n");
        exit(3);
    }
    double t = now_for(threads) - t0;
    *wall = clock_s(CLOCK_MONOTONIC) - w0;
    am_msgd_free(m);
    return t;
}

static double rng_only(const am_problem *p, size_t R, uint64_t N, double *sink)
{
    double *y = malloc(p->dim * sizeof *y), acc = 0;
    double t0 = now_for(1);
    for (size_t r = 0; r < R; r++) {
        am_rng rng;
        am_rng_init(&rng, 1, r, AM_STREAM_DATA, 0);
        for (uint64_t k = 0; k < N; k++) {
            am_rng_seek(&rng, k);
            am_data_draw(p, &rng, y);
            acc += y[k % p->dim];
        }
    }
    double t = now_for(1) - t0;
    *sink += acc;
    free(y);
    return t;
}

int main(int argc, char **argv)
{
    am_common_gsl_handler_off(); /* the program, not the library, sets GSL's handler */
    double budget = argc > 1 ? atof(argv[1]) : 4e8; /* coordinate-steps per measurement */
    int reps = argc > 2 ? atoi(argv[2]) : 1;
    if (reps < 1) reps = 1;
    const size_t dims[] = {4, 100, 1000};
    const char *dists[] = {"gaussian", "rademacher"};
    double sink = 0;
    printf("# dim dist kernel_ns scalar_ns rng_ns ratio t1_s t2_s speedup identical\n");
    for (size_t di = 0; di < 3; di++)
        for (size_t si = 0; si < 2; si++) {
            size_t d = dims[di];
            double *l = malloc(d * sizeof *l);
            for (size_t i = 0; i < d; i++) l[i] = 4.0 - 3.0 * (double)i / (double)(d - 1);
            am_dist dist;
            char err[64];
            am_problem_dist_parse(dists[si], &dist, err, sizeof err);
            am_problem *p = am_problem_alloc(d, l, dist, 0, NULL, NULL, 0);
            size_t R = 64;
            uint64_t N = (uint64_t)(budget / ((double)R * (double)d));
            am_ensemble_result *r1 = NULL, *r2 = NULL, *r0 = NULL;
            double t1 = 1e300, t2 = 1e300, tr = 1e300, t0 = 1e300, w1 = 1e300;
            for (int rep = 0; rep < reps; rep++) {
                am_ensemble_result *a, *b, *c;
                double v1, v2, v0;
                double s1 = run(p, R, N, 1, 0, &a, &v1), s2 = run(p, R, N, 2, 0, &b, &v2);
                double s0 = run(p, R, N, 1, 1, &c, &v0), sr = rng_only(p, R, N, &sink);
                (void)v0;
                w1 = v1 < w1 ? v1 : w1;
                t1 = s1 < t1 ? s1 : t1;
                t2 = s2 < t2 ? s2 : t2;
                t0 = s0 < t0 ? s0 : t0;
                tr = sr < tr ? sr : tr;
                am_ensemble_result_free(r1);
                am_ensemble_result_free(r2);
                am_ensemble_result_free(r0);
                r1 = a;
                r2 = b;
                r0 = c;
            }
            size_t nb = r1->ngrid * r1->nobs * sizeof *r1->obs;
            int same = memcmp(r1->obs, r2->obs, nb) == 0 && memcmp(r1->obs, r0->obs, nb) == 0;
            double cs = (double)R * (double)N * (double)d;
            printf("%zu %s %.3f %.3f %.3f %.2f %.3f %.3f %.2f %s\n", d, dists[si], 1e9 * t1 / cs,
                   1e9 * t0 / cs, 1e9 * tr / cs, t1 / tr, w1, t2, w1 / t2, same ? "yes" : "NO");
            fflush(stdout);
            am_ensemble_result_free(r1);
            am_ensemble_result_free(r2);
            am_ensemble_result_free(r0);
            am_problem_free(p);
            free(l);
        }
    if (sink == 12345.0) puts("");
    return 0;
}
