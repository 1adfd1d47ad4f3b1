/*
 * bench_sde.c -- cost of the Euler–Maruyama engine per coordinate-step (ns per state
 * coordinate per time step, one thread) for the global streaming-PCA SDE, next to the
 * Async-MSGD Monte Carlo kernel and the normal generator alone, in the same run:
 *
 *   ns/coord-step = wall time / (steps * d).
 *
 * Both engines are driven through their am_model callbacks (start, advance) on one
 * replica, the way the ensemble drives them, without the ensemble's bookkeeping.
 * Each figure is the best of three timings. Usage: bench_sde [scale] (scale multiplies
 * the work, default 1; about 20 s at 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/am_rng.h"
#include "../montecarlo/am_msgd.h"
#include "../solvers/am_sde.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Times model->advance over `steps` steps (after a short warm-up); ns per coordinate-step. */
static double time_model(const am_model *m, size_t d, uint64_t steps)
{
    size_t bytes = (m->work_bytes + 63) / 64 * 64;
    void *work = aligned_alloc(64, bytes);
    if (!work) return -1;
    memset(work, 0, bytes);
    if (m->start(m->ctx, 0, work) != AM_OK) return -1;
    uint64_t warm = steps / 10 + 1, k = warm;
    m->advance(m->ctx, work, 0, warm);
    /* best of three: the machine is shared, the minimum is the least disturbed */
    double best = 1e300;
    int div = 0;
    for (int rep = 0; rep < 3 && !div; rep++) {
        double t0 = now();
        div = m->advance(m->ctx, work, k, k + steps);
        double t1 = now();
        k += steps;
        if (t1 - t0 < best) best = t1 - t0;
    }
    double obs[2];
    m->observe(m->ctx, work, obs);
    free(work);
    if (div) fprintf(stderr, "warning: replica diverged (err %g)\n", obs[0]);
    return best * 1e9 / ((double)steps * (double)d);
}

static void msgd_initial(uint64_t replica, double *v0, const void *ctx)
{
    am_msgd_initial(ctx, replica, v0);
}

static double bench_sde(const am_problem *p, am_msgd *init, am_sde_sampler sampler, uint64_t steps)
{
    am_sde_pca_params pp = am_sde_pca_params_default();
    pp.eta = 1e-4;
    pp.sampler = sampler;
    pp.initial = msgd_initial;
    pp.initial_ctx = init;
    am_status st;
    am_sde_pca *m = am_sde_pca_global_alloc(p, &pp, &st);
    if (!m) return -1;
    am_sde_params sp = am_sde_params_default();
    sp.dt = 1e-4;
    am_sde_model *sm = am_sde_model_alloc(am_sde_pca_system(m), &sp, am_sde_pca_observer(m), &st, NULL, 0);
    if (!sm) return -1;
    double ns = time_model(am_sde_model_get(sm), p->dim, steps);
    am_sde_model_free(sm);
    am_sde_pca_free(m);
    return ns;
}

int main(int argc, char **argv)
{
    am_common_gsl_handler_off(); /* the program, not the library, sets GSL's handler */
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    if (!(scale > 0)) scale = 1.0;
    const size_t dims[3] = {4, 100, 1000};
    const double coord_steps = 2e7 * scale; /* coordinate-steps per measurement */

    /* the floor: one standard normal from Philox + ziggurat */
    am_rng r;
    am_rng_init(&r, 1, 0, AM_STREAM_NOISE, 0);
    uint64_t nrng = (uint64_t)coord_steps;
    double acc = 0, ns_rng = 1e300;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now();
        for (uint64_t i = 0; i < nrng; i++)
            acc += am_rng_gaussian(&r);
        double ns = (now() - t0) * 1e9 / (double)nrng;
        if (ns < ns_rng) ns_rng = ns;
    }

    printf("# ns per coordinate-step, one thread; normal draw alone: %.2f ns (checksum %.3g)\n",
           ns_rng, acc);
    printf("%-6s %-12s %-14s %-14s %-14s %-12s %-12s\n", "d", "mc_gauss", "sde_gauss",
           "sde_radem_e1", "sde_dense_rad", "sde/mc", "sde/normal");
    for (int k = 0; k < 3; k++) {
        size_t d = dims[k];
        double *l = malloc(d * sizeof *l);
        for (size_t i = 0; i < d; i++)
            l[i] = 4.0 - 3.0 * (double)i / (double)(d - 1);
        am_dist gauss = {AM_DIST_GAUSSIAN, 0}, rad = {AM_DIST_RADEMACHER, 0};
        am_problem *pg = am_problem_alloc(d, l, gauss, 0, NULL, NULL, 0);
        am_problem *pr = am_problem_alloc(d, l, rad, 0, NULL, NULL, 0);
        am_msgd_params mp = am_msgd_params_default();
        mp.eta = 1e-4;
        am_status st;
        am_msgd *mg = am_msgd_alloc(pg, &mp, &st, NULL, 0);
        mp.init.kind = AM_INIT_EIGEN; /* near e_1: the Rademacher diagonal has a negative entry */
        mp.init.j = 1;
        am_msgd *mr = am_msgd_alloc(pr, &mp, &st, NULL, 0);
        if (!pg || !pr || !mg || !mr) {
            fprintf(stderr, "bench_sde: setup failed\n");
            return 3;
        }
        uint64_t steps = (uint64_t)(coord_steps / (double)d);
        double ns_mc = time_model(am_msgd_model(mg), d, steps);
        double ns_g = bench_sde(pg, mg, AM_SDE_SAMPLER_FAST, steps);
        double ns_r = bench_sde(pr, mr, AM_SDE_SAMPLER_FAST, steps);
        /* dense: O(d^3) per step, so far fewer steps */
        uint64_t dsteps = (uint64_t)(coord_steps / (10 * (double)d * (double)d)) + 2;
        double ns_dense = d <= 100 ? bench_sde(pr, mr, AM_SDE_SAMPLER_DENSE, dsteps) : -1;
        char dense[32];
        if (ns_dense > 0)
            snprintf(dense, sizeof dense, "%.2f", ns_dense);
        else
            snprintf(dense, sizeof dense, "-");
        printf("%-6zu %-12.2f %-14.2f %-14.2f %-14s %-12.2f %-12.2f\n", d, ns_mc, ns_g, ns_r, dense,
               ns_g / ns_mc, ns_g / ns_rng);
        am_msgd_free(mg);
        am_msgd_free(mr);
        am_problem_free(pg);
        am_problem_free(pr);
        free(l);
    }
    return 0;
}
