/*
 * bench_ps.c -- cost of the parameter-server engine (montecarlo/am_msgd_ps.h) per
 * replica-step on one thread, for each of its paths in the same run:
 *
 *   ns/replica-step = thread CPU time of am_ensemble_run / (replicas * steps)
 *
 * reference    AM_MSGD_PATH_SCALAR: runtimes one job at a time, a heap of the learners, one
 *              seek and one data draw per gradient
 * one-replica  runtimes eight jobs ahead, a scan of the learners (P <= 16), normals of a
 *              run of steps at once; replicas one at a time (with the best instruction set
 *              for the runtime words; one-replica-portable: portable C)
 * lanes-*      the same, eight replicas side by side (portable C, AVX2, AVX-512: those the
 *              CPU has)
 * The paths run alternately, five times each; the median is printed with the minimum and
 * maximum, and `same` says whether the run's statistics equal the reference's byte for byte.
 * Setting: d = 4 (and 16), P = 8 learners with exp:1 runtimes, Gaussian data, eta = 1e-4,
 * mu = 0.9, 64 replicas, seed 1. Usage: bench_ps [scale] (scale multiplies the steps,
 * default 1: 5000 steps, about 30 s). Output: CSV rows, one per variant, d and path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/am_ensemble.h"
#include "../montecarlo/am_msgd_batch.h"
#include "../montecarlo/am_msgd_ps.h"

enum { REPS = 5, NPATH = 6, REPLICAS = 64 };

static const char *const path_names[NPATH] = {
    "reference",      "one-replica", "one-replica-portable",
    "lanes-portable", "lanes-avx2",  "lanes-avx512"};

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One timed ensemble run on path index pi (0 reference, 1 and 2 one replica, 3.. lanes);
 * seconds, the result in *out. */
static double run_once(const am_problem *p, const am_msgd_ps_params *pp, int pi, uint64_t steps,
                       am_ensemble_result **out)
{
    am_status st;
    char err[256];
    am_msgd_ps *m = am_msgd_ps_alloc(p, pp, &st, err, sizeof err);
    if (!m) {
        fprintf(stderr, "bench_ps: %s\n", err);
        exit(1);
    }
    int path = pi == 0   ? AM_MSGD_PATH_SCALAR
               : pi == 1 ? (int)am_msgd_batch_best()
               : pi == 2 ? AM_MSGD_PATH_PORTABLE
                         : pi - 2;
    am_msgd_ps_set_path(m, path);
    am_model model = *am_msgd_ps_model(m);
    if (pi == 1 || pi == 2) {
        model.batch = 0;
        model.advance_batch = NULL;
    }
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = REPLICAS;
    ep.threads = 1;
    const uint64_t k[2] = {0, steps};
    double t0 = thread_cpu();
    st = am_ensemble_run(&model, k, 2, &ep, out);
    double t1 = thread_cpu();
    am_msgd_ps_free(m);
    if (st != AM_OK) {
        fprintf(stderr, "bench_ps: ensemble failed (%s)\n", am_strerror(st));
        exit(1);
    }
    return t1 - t0;
}

static int same(const am_ensemble_result *a, const am_ensemble_result *b)
{
    return a->diverged == b->diverged && !memcmp(a->alive, b->alive, a->ngrid * sizeof *a->alive) &&
           !memcmp(a->obs, b->obs, a->ngrid * a->nobs * sizeof *a->obs);
}

static void bench(const char *variant, size_t d, uint64_t steps)
{
    double lam[16];
    for (size_t i = 0; i < d; i++)
        lam[i] = (double)(d - i);
    am_dist g = {AM_DIST_GAUSSIAN, 0};
    am_problem *p = am_problem_alloc(d, lam, g, 0, NULL, NULL, 0);
    am_msgd_ps_params pp;
    memset(&pp, 0, sizeof pp);
    pp.msgd = am_msgd_params_default();
    pp.msgd.eta = 1e-4;
    pp.msgd.mu = 0.9;
    char err[256];
    if (!p || am_delay_parse("workers:8:exp:1", &pp.msgd.delay, err, sizeof err) ||
        am_runtime_variant_parse_spec(variant, &pp.variant, &pp.k, err, sizeof err)) {
        fprintf(stderr, "bench_ps: bad setting %s\n", variant);
        exit(1);
    }
    int npath = 3 + (int)am_msgd_batch_best() - AM_MSGD_PATH_PORTABLE + 1;
    double t[NPATH][REPS];
    int ok[NPATH];
    am_ensemble_result *ref = NULL;
    for (int rep = 0; rep < REPS; rep++)
        for (int pi = 0; pi < npath; pi++) {
            am_ensemble_result *res = NULL;
            t[pi][rep] = run_once(p, &pp, pi, steps, &res);
            if (!ref) {
                ref = res;
                continue;
            }
            if (rep == 0) ok[pi] = same(ref, res);
            am_ensemble_result_free(res);
        }
    ok[0] = 1;
    for (int pi = 0; pi < npath; pi++) {
        qsort(t[pi], REPS, sizeof t[pi][0], cmp_double);
        double scale = 1e9 / ((double)REPLICAS * (double)steps);
        printf("bench_ps,%s,%zu,8,%d,%llu,%s,%.1f,%.1f,%.1f,%s\n", variant, d, REPLICAS,
               (unsigned long long)steps, path_names[pi], t[pi][REPS / 2] * scale, t[pi][0] * scale,
               t[pi][REPS - 1] * scale, ok[pi] ? "yes" : "NO");
        fflush(stdout);
    }
    am_ensemble_result_free(ref);
    am_problem_free(p);
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(scale > 0)) {
        fprintf(stderr, "usage: bench_ps [scale > 0]\n");
        return 2;
    }
    uint64_t steps = (uint64_t)(5000 * scale);
    if (steps < 100) steps = 100;
    printf("bench,variant,d,workers,replicas,steps,path,ns_per_replica_step_median,min,max,"
           "same\n");
    const char *variants[] = {"async", "k-async:4", "k-batch-async:4",
                              "sync",  "k-sync:4",  "k-batch-sync:4"};
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++)
        bench(variants[v], 4, steps);
    bench("async", 16, steps);
    return 0;
}
