/*
 * test_msgd_ps_batch.c -- the fast paths of the parameter-server engine (am_msgd_ps.h)
 * against its reference path (AM_MSGD_PATH_SCALAR: one seek and one data draw per gradient,
 * runtimes one job at a time, a heap of the learners), byte for byte: every variant x data
 * distribution x d in {2, 3, 4, 7, 16} x replica counts that are not multiples of the lane
 * width, for the one-replica fast path and each lane path this CPU has (portable C, AVX2,
 * AVX-512), comparing the ensemble's statistics and alive counts with memcmp. Also: rotated
 * eigenbases with the adaptive step and fresh initial points, runtime laws with ties, P above
 * the scan's 16, replicas that diverge at different times, and a one-ulp change of mu or eta
 * that the comparison must see.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../montecarlo/am_msgd.h"
#include "../montecarlo/am_msgd_batch.h"
#include "../montecarlo/am_msgd_ps.h"

/* Paths compared with the reference: the one-replica fast path, then the lane paths. */
enum { ONE_REPLICA = -1 };

typedef struct {
    am_dist_kind kind;
    double nu;
    const char *name;
} ps_dist;

static const ps_dist ps_dists[] = {{AM_DIST_GAUSSIAN, 0, "gaussian"},
                                   {AM_DIST_RADEMACHER, 0, "rademacher"},
                                   {AM_DIST_UNIFORM, 0, "uniform"},
                                   {AM_DIST_EXPECTED, 0, "expected"},
                                   {AM_DIST_STUDENT, 5, "student:5"}};
static const char *const ps_variants[] = {"sync",  "k-sync:2",  "k-batch-sync:3",
                                          "async", "k-async:2", "k-batch-async:3"};
static const size_t ps_dims[] = {2, 3, 4, 7, 16};
static const size_t ps_reps[] = {5, 13};

/* Saved steps: a repeated index, intervals of one step and longer than the ring of P = 5
 * (266 slots). */
static const uint64_t ps_grid[] = {0, 3, 3, 20, 21, 60, 340, 341};
enum { PS_NGRID = sizeof ps_grid / sizeof ps_grid[0] };

static am_problem *ps_problem(size_t d, const ps_dist *dist, uint64_t rot)
{
    double l[16];
    for (size_t i = 0; i < d; i++)
        l[i] = 3.0 - 2.0 * (double)i / (double)(d - 1) + (i == 0 ? 0.5 : 0.0);
    am_dist dd = {dist->kind, dist->nu};
    am_problem *p = am_problem_alloc(d, l, dd, rot, NULL, NULL, 0);
    cr_assert_not_null(p, "problem d=%zu dist=%s", d, dist->name);
    return p;
}

static am_msgd_ps_params ps_params(const char *delay, const char *variant, double eta, double mu)
{
    am_msgd_ps_params pp;
    memset(&pp, 0, sizeof pp);
    pp.msgd = am_msgd_params_default();
    pp.msgd.eta = eta;
    pp.msgd.mu = mu;
    pp.msgd.seed = 2024;
    pp.msgd.coords = 1;
    char err[256];
    cr_assert_eq(am_delay_parse(delay, &pp.msgd.delay, err, sizeof err), AM_OK, "%s", err);
    cr_assert_eq(am_runtime_variant_parse_spec(variant, &pp.variant, &pp.k, err, sizeof err), AM_OK,
                 "%s", err);
    return pp;
}

/* The ensemble on one path (ONE_REPLICA: the fast path without lanes); NULL if the CPU lacks
 * that lane path. */
static am_ensemble_result *ps_run(const am_problem *p, const am_msgd_ps_params *pp, int path,
                                  size_t R, const uint64_t *k, size_t ngrid)
{
    am_status st;
    char err[256];
    am_msgd_ps *m = am_msgd_ps_alloc(p, pp, &st, err, sizeof err);
    cr_assert_not_null(m, "alloc: %s", err);
    am_msgd_ps_set_path(m, path == ONE_REPLICA ? (int)am_msgd_batch_best() : path);
    am_model model = *am_msgd_ps_model(m);
    if (path == ONE_REPLICA) {
        model.batch = 0;
        model.advance_batch = NULL;
    } else if (am_msgd_ps_path_get(m) != path) {
        am_msgd_ps_free(m);
        return NULL;
    }
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = R;
    ep.threads = 1;
    am_ensemble_result *res = NULL;
    st = am_ensemble_run(&model, k, ngrid, &ep, &res);
    cr_assert_eq(st, AM_OK, "ensemble: status %d", (int)st);
    am_msgd_ps_free(m);
    return res;
}

/* 1 if the two results are the same bytes. */
static int ps_same(const am_ensemble_result *a, const am_ensemble_result *b)
{
    return a->ngrid == b->ngrid && a->nobs == b->nobs && a->diverged == b->diverged &&
           !memcmp(a->alive, b->alive, a->ngrid * sizeof *a->alive) &&
           !memcmp(a->obs, b->obs, a->ngrid * a->nobs * sizeof *a->obs);
}

/* Every fast path against the reference for one setting; returns the lane paths run. */
static int ps_compare(const am_problem *p, const am_msgd_ps_params *pp, size_t R, const uint64_t *k,
                      size_t ngrid, const char *what)
{
    int lanes = 0;
    am_ensemble_result *ref = ps_run(p, pp, AM_MSGD_PATH_SCALAR, R, k, ngrid);
    for (int path = ONE_REPLICA; path <= AM_MSGD_PATH_AVX512; path++) {
        if (path == AM_MSGD_PATH_SCALAR) continue;
        am_ensemble_result *res = ps_run(p, pp, path, R, k, ngrid);
        if (!res) continue;
        lanes += path != ONE_REPLICA;
        cr_assert(ps_same(ref, res),
                  "%s: path %d differs from the reference (d=%zu R=%zu, diverged %zu vs %zu)", what,
                  path, p->dim, R, res->diverged, ref->diverged);
        am_ensemble_result_free(res);
    }
    am_ensemble_result_free(ref);
    return lanes;
}

Test(msgd_ps_batch, every_variant_distribution_dimension_replicas, .timeout = 60)
{
    int lanes = 0;
    for (size_t vi = 0; vi < sizeof ps_variants / sizeof *ps_variants; vi++)
        for (size_t di = 0; di < sizeof ps_dists / sizeof *ps_dists; di++)
            for (size_t ni = 0; ni < sizeof ps_dims / sizeof *ps_dims; ni++) {
                am_problem *p = ps_problem(ps_dims[ni], &ps_dists[di], 0);
                am_msgd_ps_params pp = ps_params("workers:5:exp:1", ps_variants[vi], 0.01, 0.7);
                for (size_t ri = 0; ri < sizeof ps_reps / sizeof *ps_reps; ri++) {
                    char what[128];
                    snprintf(what, sizeof what, "%s, dist %s", ps_variants[vi], ps_dists[di].name);
                    lanes += ps_compare(p, &pp, ps_reps[ri], ps_grid, PS_NGRID, what);
                }
                am_problem_free(p);
            }
    /* the portable lane path runs on every CPU */
    cr_assert_geq(lanes, 300, "only %d lane runs compared", lanes);
}

/* Rotated eigenbases, the adaptive step, a fresh initial point per replica. */
Test(msgd_ps_batch, rotated_adaptive_random_each)
{
    for (size_t vi = 0; vi < sizeof ps_variants / sizeof *ps_variants; vi++)
        for (size_t di = 0; di < sizeof ps_dists / sizeof *ps_dists; di++) {
            size_t d = vi % 2 ? 7 : 4;
            am_problem *p = ps_problem(d, &ps_dists[di], 99);
            am_msgd_ps_params pp = ps_params("workers:5:exp:1", ps_variants[vi], 0.01, 0.5);
            pp.lr_c = 1e-3;
            pp.lr_max = 0.02;
            char err[256];
            cr_assert_eq(am_msgd_init_parse("random-each", d, &pp.msgd.init, err, sizeof err),
                         AM_OK, "%s", err);
            char what[128];
            snprintf(what, sizeof what, "rotated adaptive %s, dist %s", ps_variants[vi],
                     ps_dists[di].name);
            ps_compare(p, &pp, 11, ps_grid, PS_NGRID, what);
            am_problem_free(p);
        }
}

/* Runtime laws with ties (const) and near-ties, one learner, P above the scan's 16. */
Test(msgd_ps_batch, runtime_laws_and_worker_counts)
{
    const char *delays[] = {"workers:4:const:1", "workers:3:uniform:1:1.5", "workers:1:exp:2",
                            "workers:20:pareto:2.5:1", "workers:6:shiftexp:0.5:2"};
    const ps_dist *g = &ps_dists[0];
    for (size_t i = 0; i < sizeof delays / sizeof *delays; i++)
        for (size_t vi = 0; vi < sizeof ps_variants / sizeof *ps_variants; vi++) {
            am_problem *p = ps_problem(3, g, 0);
            am_msgd_ps_params pp = ps_params(delays[i], ps_variants[vi], 0.01, 0.6);
            if (pp.k > pp.msgd.delay.param) pp.k = (size_t)pp.msgd.delay.param;
            char what[128];
            snprintf(what, sizeof what, "%s %s", delays[i], ps_variants[vi]);
            ps_compare(p, &pp, 9, ps_grid, PS_NGRID, what);
            am_problem_free(p);
        }
}

/* Large steps: replicas diverge at different saved times and leave their lane group. */
Test(msgd_ps_batch, replicas_diverging_at_different_times)
{
    const uint64_t k[] = {0, 10, 20, 40, 60, 80, 100, 150, 200, 300};
    for (size_t di = 0; di < 3; di++) {
        am_problem *p = ps_problem(4, &ps_dists[di], 0);
        am_msgd_ps_params pp = ps_params("workers:4:exp:1", "async", 0.01, 0.9);
        pp.msgd.blowup = 1e2;
        am_ensemble_result *ref = ps_run(p, &pp, AM_MSGD_PATH_SCALAR, 19, k, 10);
        cr_assert(ref->diverged > 0 && ref->diverged < 19,
                  "dist %s: some but not all of 19 replicas should diverge, got %zu",
                  ps_dists[di].name, ref->diverged);
        int times = 0;
        for (size_t g = 1; g < 10; g++)
            times += ref->alive[g] != ref->alive[g - 1];
        cr_assert_geq(times, 2, "dist %s: divergence at %d saved times only", ps_dists[di].name,
                      times);
        am_ensemble_result_free(ref);
        ps_compare(p, &pp, 19, k, 10, ps_dists[di].name);
        am_problem_free(p);
    }
}

/* The comparison can fail: mu or eta one ulp away, on the fastest path, gives other bytes. */
Test(msgd_ps_batch, comparison_detects_one_ulp)
{
    am_problem *p = ps_problem(4, &ps_dists[0], 0);
    am_msgd_ps_params pp = ps_params("workers:5:exp:1", "k-batch-async:3", 0.01, 0.7);
    int best = (int)am_msgd_batch_best();
    am_ensemble_result *ref = ps_run(p, &pp, AM_MSGD_PATH_SCALAR, 13, ps_grid, PS_NGRID);
    am_msgd_ps_params a = pp, b = pp;
    a.msgd.mu = nextafter(pp.msgd.mu, 1.0);
    b.msgd.eta = nextafter(pp.msgd.eta, 0.0);
    am_ensemble_result *ra = ps_run(p, &a, best, 13, ps_grid, PS_NGRID);
    am_ensemble_result *rb = ps_run(p, &b, best, 13, ps_grid, PS_NGRID);
    am_ensemble_result *same = ps_run(p, &pp, best, 13, ps_grid, PS_NGRID);
    cr_assert_not(ps_same(ref, ra), "mu one ulp larger compared equal");
    cr_assert_not(ps_same(ref, rb), "eta one ulp smaller compared equal");
    cr_assert(ps_same(ref, same), "the unchanged setting differs");
    am_ensemble_result_free(ref);
    am_ensemble_result_free(ra);
    am_ensemble_result_free(rb);
    am_ensemble_result_free(same);
    am_problem_free(p);
}

/* The engine takes the best path by default (without AMSGD_SIMD), a path out of range falls
 * back to it, lanes apply up to d = 16 and not to data sets or beyond. */
Test(msgd_ps_batch, path_selection)
{
    unsetenv("AMSGD_SIMD"); /* the default; each test runs in its own process */
    int best = (int)am_msgd_batch_best();
    am_problem *p = ps_problem(16, &ps_dists[0], 0);
    am_msgd_ps_params pp = ps_params("workers:5:exp:1", "async", 0.01, 0.7);
    am_status st;
    am_msgd_ps *m = am_msgd_ps_alloc(p, &pp, &st, NULL, 0);
    cr_assert_not_null(m);
    cr_assert_eq(am_msgd_ps_path_get(m), best);
    cr_assert_eq(am_msgd_ps_model(m)->batch, AM_MSGD_LANES, "d = 16 runs in lanes");
    am_msgd_ps_set_path(m, 99);
    cr_assert_eq(am_msgd_ps_path_get(m), best);
    am_msgd_ps_set_path(m, AM_MSGD_PATH_SCALAR);
    cr_assert_eq(am_msgd_ps_model(m)->batch, 0, "the reference runs one replica at a time");
    am_msgd_ps_free(m);
    am_problem_free(p);
    double l[17];
    for (size_t i = 0; i < 17; i++)
        l[i] = 17.0 - (double)i;
    am_dist g = {AM_DIST_GAUSSIAN, 0};
    p = am_problem_alloc(17, l, g, 0, NULL, NULL, 0);
    cr_assert_not_null(p);
    m = am_msgd_ps_alloc(p, &pp, &st, NULL, 0);
    cr_assert_not_null(m);
    cr_assert_eq(am_msgd_ps_model(m)->batch, 0, "d = 17 runs one replica at a time");
    am_msgd_ps_free(m);
    am_problem_free(p);
}
