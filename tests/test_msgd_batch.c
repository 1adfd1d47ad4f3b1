/*
 * test_msgd_batch.c -- the replica-batched Async-MSGD step (am_msgd_batch.h) against the
 * one-replica path, byte for byte: every data distribution x delay model x d in
 * {2, 3, 4, 7, 16} x replica counts that are not multiples of the lane width, one lane
 * group or two per call (9, 17, 23, 40 replicas), the literal-dimension bodies, for each
 * path this CPU has (portable C, AVX2, AVX-512), comparing the ensemble's statistics,
 * alive counts, divergence count and every replica's summary with memcmp. Also: rotated
 * eigenbases and every initial point, replicas that diverge at different times (lanes
 * dropped from the group), grids with repeated and short intervals, and the normals of
 * am_rng_gaussian_lanes against am_rng_fill_gaussian_steps lane by lane.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../core/am_rng.h"
#include "../montecarlo/am_msgd.h"
#include "../montecarlo/am_msgd_batch.h"

typedef struct {
    am_dist_kind kind;
    double nu;
    const char *name;
} dist_case;

static const dist_case dists[] = {{AM_DIST_GAUSSIAN, 0, "gaussian"},
                                  {AM_DIST_RADEMACHER, 0, "rademacher"},
                                  {AM_DIST_UNIFORM, 0, "uniform"},
                                  {AM_DIST_STUDENT, 5, "student:5"},
                                  {AM_DIST_EXPECTED, 0, "expected"}};
static const char *const delays[] = {"none", "const:3", "uniform:4", "geometric:2"};
static const size_t dims[] = {2, 3, 4, 7, 16};
static const size_t reps[] = {1, 5, 13, 19};

static am_problem *make_problem(size_t d, am_dist_kind kind, double nu, uint64_t rot)
{
    double l[32];
    cr_assert_leq(d, 32, "make_problem: d=%zu", d);
    for (size_t i = 0; i < d; i++)
        l[i] = 4.0 - 3.0 * (double)i / (double)(d > 1 ? d - 1 : 1) + (i == 0 ? 0.5 : 0.0);
    am_dist dist = {kind, nu};
    am_problem *p = am_problem_alloc(d, l, dist, rot, NULL, NULL, 0);
    cr_assert_not_null(p, "problem d=%zu dist=%d", d, (int)kind);
    return p;
}

/* Runs the ensemble on path `path`; NULL with *skip = 1 if the CPU lacks that path. */
static am_ensemble_result *run_path(const am_problem *p, const am_msgd_params *mp,
                                    const uint64_t *k, size_t ngrid, size_t R, int path, int *skip)
{
    am_status st;
    am_msgd *m = am_msgd_alloc(p, mp, &st, NULL, 0);
    cr_assert_not_null(m, "alloc: status %d", (int)st);
    am_msgd_set_path(m, path);
    *skip = am_msgd_path_get(m) != path && p->dim <= AM_MSGD_BATCH_MAXDIM;
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = R;
    ep.threads = 1;
    ep.keep_summary = 1;
    am_ensemble_result *res = NULL;
    st = am_ensemble_run(am_msgd_model(m), k, ngrid, &ep, &res);
    cr_assert_eq(st, AM_OK, "ensemble: status %d", (int)st);
    am_msgd_free(m);
    return res;
}

/* 1 if the two results are the same bytes. */
static int same_result(const am_ensemble_result *a, const am_ensemble_result *b)
{
    if (a->ngrid != b->ngrid || a->nobs != b->nobs || a->nsummary != b->nsummary ||
        a->replicas != b->replicas || a->diverged != b->diverged)
        return 0;
    size_t ng = a->ngrid, no = a->nobs, ns = a->nsummary;
    if (memcmp(a->alive, b->alive, ng * sizeof *a->alive)) return 0;
    if (memcmp(a->obs, b->obs, ng * no * sizeof *a->obs)) return 0;
    if (ns && memcmp(a->summary_stats, b->summary_stats, ns * sizeof *a->summary_stats)) return 0;
    if (ns && memcmp(a->summary, b->summary, a->replicas * ns * sizeof *a->summary)) return 0;
    return 1;
}

/* Every batched path against the one-replica path for one setting; returns how many paths
 * ran. */
static int compare_paths(const am_problem *p, const am_msgd_params *mp, const uint64_t *k,
                         size_t ngrid, size_t R, const char *what)
{
    int skip, ran = 0;
    am_ensemble_result *ref = run_path(p, mp, k, ngrid, R, AM_MSGD_PATH_SCALAR, &skip);
    for (int path = AM_MSGD_PATH_PORTABLE; path <= AM_MSGD_PATH_AVX512; path++) {
        am_ensemble_result *res = run_path(p, mp, k, ngrid, R, path, &skip);
        if (!skip) {
            ran++;
            cr_assert(same_result(ref, res),
                      "%s: path %d differs from the one-replica path (d=%zu R=%zu, diverged "
                      "%zu vs %zu)",
                      what, path, p->dim, R, res->diverged, ref->diverged);
        }
        am_ensemble_result_free(res);
    }
    am_ensemble_result_free(ref);
    return ran;
}

static am_msgd_params base_params(const char *delay, double mu)
{
    am_msgd_params mp = am_msgd_params_default();
    char err[256];
    cr_assert_eq(am_delay_parse(delay, &mp.delay, err, sizeof err), AM_OK, "%s", err);
    mp.eta = 0.01;
    mp.mu = mu;
    mp.seed = 77;
    mp.coords = 1;
    mp.summary = 1;
    mp.eps = 0.05;
    return mp;
}

/* Saved steps with a repeated index and intervals shorter and longer than the ring. */
static const uint64_t grid[] = {0, 1, 1, 4, 30, 31, 90, 150, 151, 240};
enum { NGRID = sizeof grid / sizeof grid[0] };

Test(msgd_batch, every_distribution_delay_dimension_replicas)
{
    int ran = 0;
    for (size_t di = 0; di < sizeof dists / sizeof dists[0]; di++)
        for (size_t dd = 0; dd < sizeof delays / sizeof delays[0]; dd++)
            for (size_t ni = 0; ni < sizeof dims / sizeof dims[0]; ni++) {
                am_problem *p = make_problem(dims[ni], dists[di].kind, dists[di].nu, 0);
                am_msgd_params mp = base_params(delays[dd], 0.7);
                for (size_t ri = 0; ri < sizeof reps / sizeof reps[0]; ri++) {
                    char what[128];
                    snprintf(what, sizeof what, "dist %s delay %s", dists[di].name, delays[dd]);
                    ran += compare_paths(p, &mp, grid, NGRID, reps[ri], what);
                }
                am_problem_free(p);
            }
    /* the portable path runs on every CPU */
    cr_assert_geq(ran, 400, "only %d batched runs compared", ran);
}

Test(msgd_batch, rotated_basis_and_initial_points)
{
    const char *inits[] = {"random", "random-each", "e:2", "angle:0.3"};
    for (size_t di = 0; di < sizeof dists / sizeof dists[0]; di++)
        for (size_t ii = 0; ii < 4; ii++) {
            size_t d = ii % 2 ? 7 : 4;
            am_problem *p = make_problem(d, dists[di].kind, dists[di].nu, 12345);
            am_msgd_params mp = base_params(ii % 2 ? "uniform:6" : "const:5", 0.5);
            char err[256];
            cr_assert_eq(am_msgd_init_parse(inits[ii], d, &mp.init, err, sizeof err), AM_OK, "%s",
                         err);
            mp.coords_signed = (int)(ii % 2);
            char what[128];
            snprintf(what, sizeof what, "rotated, dist %s init %s", dists[di].name, inits[ii]);
            compare_paths(p, &mp, grid, NGRID, 21, what);
            am_problem_free(p);
        }
}

/* Two lane groups per call (replica counts that give a pair of full groups, a pair with a
 * part-filled second group, and a single group after a pair: the ensemble passes up to
 * AM_MSGD_BATCH_REPLICAS replicas of a 32-replica chunk at a time, so 9 = one pair, 17 = a
 * pair and one replica alone, 23 = a pair and a single group, 40 = two pairs and a single
 * group), the bodies for the literal dimensions 2, 3, 4 (Gaussian data) next to the general
 * one (7, 16), and the stale iterate taken from the registers (none, const:0) or from the
 * ring (const:1, const:3, drawn delays). */
Test(msgd_batch, lane_group_pairs_and_dimension_bodies)
{
    static const char *const pdelays[] = {"none",    "const:0",   "const:1",
                                          "const:3", "uniform:4", "geometric:2"};
    static const size_t preps[] = {9, 17, 23, 40};
    int ran = 0, settings = 0;
    for (size_t di = 0; di < sizeof dists / sizeof dists[0]; di++)
        for (size_t dd = 0; dd < sizeof pdelays / sizeof pdelays[0]; dd++)
            for (size_t ni = 0; ni < sizeof dims / sizeof dims[0]; ni++) {
                am_problem *p = make_problem(dims[ni], dists[di].kind, dists[di].nu, 0);
                am_msgd_params mp = base_params(pdelays[dd], 0.7);
                for (size_t ri = 0; ri < sizeof preps / sizeof preps[0]; ri++) {
                    char what[128];
                    snprintf(what, sizeof what, "pairs: dist %s delay %s", dists[di].name,
                             pdelays[dd]);
                    int r = compare_paths(p, &mp, grid, NGRID, preps[ri], what);
                    ran += r;
                    settings += r > 0;
                }
                am_problem_free(p);
            }
    /* every setting ran on at least one batched path (the portable path runs on every CPU) */
    cr_assert_eq(settings, 5 * 6 * 5 * 4, "only %d of %d settings compared", settings,
                 5 * 6 * 5 * 4);
    cr_assert_geq(ran, settings);
}

/* Large steps: replicas diverge at different saved times and leave their lane group. */
Test(msgd_batch, replicas_diverging_at_different_times)
{
    const uint64_t k[] = {0, 20, 40, 60, 80, 100, 150, 200, 300, 400};
    for (size_t di = 0; di < 4; di++) {
        am_problem *p = make_problem(4, dists[di].kind, dists[di].nu, 0);
        am_msgd_params mp = base_params("uniform:3", 0.9);
        mp.eta = 0.008;
        mp.blowup = 1e3;
        int skip;
        am_ensemble_result *ref = run_path(p, &mp, k, 10, 19, AM_MSGD_PATH_SCALAR, &skip);
        cr_assert(ref->diverged > 0 && ref->diverged < 19,
                  "dist %s: the setting should let some but not all of 19 replicas diverge, "
                  "got %zu",
                  dists[di].name, ref->diverged);
        cr_assert(ref->alive[3] != ref->alive[9] || ref->alive[1] != ref->alive[3],
                  "dist %s: divergence should happen at different times", dists[di].name);
        am_ensemble_result_free(ref);
        compare_paths(p, &mp, k, 10, 19, dists[di].name);
        am_problem_free(p);
    }
}

/* The comparison can fail: another seed on the batched path gives other bytes. */
Test(msgd_batch, comparison_detects_a_difference)
{
    am_problem *p = make_problem(4, AM_DIST_GAUSSIAN, 0, 0);
    am_msgd_params mp = base_params("const:3", 0.7);
    int skip;
    am_ensemble_result *a = run_path(p, &mp, grid, NGRID, 13, AM_MSGD_PATH_SCALAR, &skip);
    mp.seed++;
    am_ensemble_result *b = run_path(p, &mp, grid, NGRID, 13, AM_MSGD_PATH_PORTABLE, &skip);
    cr_assert_not(same_result(a, b), "different seeds compared equal");
    am_ensemble_result_free(a);
    am_ensemble_result_free(b);
    am_problem_free(p);
}

/* The engine takes the best path by default and honours AMSGD_SIMD. */
Test(msgd_batch, default_path_and_environment)
{
    am_problem *p = make_problem(4, AM_DIST_GAUSSIAN, 0, 0);
    am_msgd_params mp = base_params("none", 0);
    am_status st;
    unsetenv("AMSGD_SIMD");
    am_msgd *m = am_msgd_alloc(p, &mp, &st, NULL, 0);
    cr_assert_eq(am_msgd_path_get(m), (int)am_msgd_batch_best());
    /* two lane groups per call */
    cr_assert_eq(am_msgd_model(m)->batch, AM_MSGD_BATCH_REPLICAS);
    cr_assert_eq(AM_MSGD_BATCH_REPLICAS, 2 * AM_MSGD_LANES);
    am_msgd_free(m);
    setenv("AMSGD_SIMD", "scalar", 1);
    m = am_msgd_alloc(p, &mp, &st, NULL, 0);
    cr_assert_eq(am_msgd_path_get(m), AM_MSGD_PATH_SCALAR);
    cr_assert_null(am_msgd_model(m)->advance_batch);
    am_msgd_free(m);
    setenv("AMSGD_SIMD", "portable", 1);
    m = am_msgd_alloc(p, &mp, &st, NULL, 0);
    cr_assert_eq(am_msgd_path_get(m), AM_MSGD_PATH_PORTABLE);
    am_msgd_free(m);
    unsetenv("AMSGD_SIMD");
    am_problem_free(p);
    /* above the batched dimensions: one replica at a time */
    p = make_problem(17, AM_DIST_GAUSSIAN, 0, 0);
    m = am_msgd_alloc(p, &mp, &st, NULL, 0);
    cr_assert_eq(am_msgd_path_get(m), AM_MSGD_PATH_SCALAR);
    am_msgd_free(m);
    am_problem_free(p);
}

/* am_rng_gaussian_lanes equals am_rng_fill_gaussian_steps per lane, for every instruction
 * set, for step lengths that cross the batch and odd lengths (the unused last word). */
Test(msgd_batch, gaussian_lanes_equal_per_lane_steps)
{
    const size_t ns[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 33, 128, 255, 300};
    enum { NSTEPS = 70 };
    am_rng r[AM_RNG_LANES];
    static double a[NSTEPS * 300 * AM_RNG_LANES], b[NSTEPS * 300];
    for (size_t c = 0; c < sizeof ns / sizeof ns[0]; c++)
        for (int simd = 0; simd <= 2; simd++) {
            size_t n = ns[c];
            for (int l = 0; l < AM_RNG_LANES; l++)
                am_rng_init(&r[l], 4242, (uint64_t)(3 * l + 1), AM_STREAM_DATA, 0);
            am_rng_gaussian_lanes(r, 1000, NSTEPS, n, a, simd);
            for (int l = 0; l < AM_RNG_LANES; l++) {
                am_rng q;
                am_rng_init(&q, 4242, (uint64_t)(3 * l + 1), AM_STREAM_DATA, 0);
                am_rng_fill_gaussian_steps(&q, 1000, NSTEPS, n, b);
                for (size_t t = 0; t < NSTEPS * n; t++)
                    cr_assert(memcmp(&a[t * AM_RNG_LANES + (size_t)l], &b[t], sizeof b[t]) == 0,
                              "n=%zu simd=%d lane %d normal %zu: %.17g vs %.17g", n, simd, l, t,
                              a[t * AM_RNG_LANES + (size_t)l], b[t]);
            }
        }
}

/* am_rng_words_lanes equals the scalar stream's words per lane. */
Test(msgd_batch, words_lanes_equal_scalar_words)
{
    am_rng r[AM_RNG_LANES];
    static uint64_t w[13 * 2 * 9 * AM_RNG_LANES];
    for (int simd = 0; simd <= 2; simd++)
        for (size_t nb = 1; nb <= 9; nb += 4) {
            for (int l = 0; l < AM_RNG_LANES; l++)
                am_rng_init(&r[l], 5, (uint64_t)l * 1000003u, AM_STREAM_DELAY, 0);
            am_rng_words_lanes(r, (1ull << 40) - 5, 13, nb, w, simd);
            for (int l = 0; l < AM_RNG_LANES; l++)
                for (size_t s = 0; s < 13; s++) {
                    am_rng q;
                    am_rng_init(&q, 5, (uint64_t)l * 1000003u, AM_STREAM_DELAY,
                                (1ull << 40) - 5 + s);
                    for (size_t j = 0; j < 2 * nb; j++) {
                        uint64_t x = am_rng_u64(&q);
                        cr_assert_eq(w[(s * 2 * nb + j) * AM_RNG_LANES + (size_t)l], x,
                                     "simd=%d nb=%zu lane %d step %zu word %zu", simd, nb, l, s, j);
                    }
                }
        }
}
