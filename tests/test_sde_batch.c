/*
 * test_sde_batch.c -- the streaming-PCA SDE models advanced 8 replicas side by side
 * (solvers/am_sde_batch.c) against one replica at a time, byte for byte: every data
 * distribution x model (global fast and dense samplers, OU; noise on and off) x d in
 * {2, 3, 4, 7, 16} x replica counts that are not multiples of the lane width, for each
 * path this CPU has (portable C, AVX2, AVX-512), comparing the ensemble's statistics,
 * alive counts and divergence count with memcmp. Initial points alternate between near
 * v^1 and spread out, so a lane group mixes the branches of the fast sampler (a negative
 * diagonal entry or none). Also: a data set's distribution, rotated eigenbases, replicas
 * that diverge at different times, the comparison catching a 1-ulp change of mu or dt on
 * one side, the path selection (AMSGD_SIMD, d > 16), and `amsgd sde` with AMSGD_SIMD=scalar
 * printing the same bytes as the default.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../core/am_ensemble.h"
#include "../core/am_rng.h"
#include "../theory/am_datamoments.h"
#include "../solvers/am_sde.h"
#include "test_util.h"

typedef struct {
    am_dist_kind kind;
    double nu;
    const char *name;
} dist_case;

static const dist_case dists[] = {{AM_DIST_GAUSSIAN, 0, "gaussian"},
                                  {AM_DIST_RADEMACHER, 0, "rademacher"},
                                  {AM_DIST_UNIFORM, 0, "uniform"},
                                  {AM_DIST_STUDENT, 6, "student:6"},
                                  {AM_DIST_EXPECTED, 0, "expected"}};
enum { NDISTS = sizeof dists / sizeof dists[0] };
static const size_t dims[] = {2, 3, 4, 7, 16};
static const size_t reps[] = {1, 5, 13, 21};

/* The models compared: global with the fast or the dense sampler, the OU limit. */
typedef enum { M_FAST, M_DENSE, M_OU } model_case;
static const char *const model_names[] = {"global fast", "global dense", "ou"};

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

/* Even replicas start near v^1 (original coordinates e_1 when not rotated), where the
 * Rademacher and uniform diagonals have a negative entry; odd ones spread out. */
static void mixed_v0(uint64_t replica, double *v0, const void *ctx)
{
    size_t d = *(const size_t *)ctx;
    double n = 0;
    for (size_t i = 0; i < d; i++) {
        double r = (double)((replica * 7 + i * 3) % 11) / 11.0;
        v0[i] = replica % 2 ? 0.2 + r : (i == 0 ? 1.0 : 0.05 * (r - 0.5));
        n += v0[i] * v0[i];
    }
    for (size_t i = 0; i < d; i++)
        v0[i] /= sqrt(n);
}

typedef struct {
    model_case model;
    double eta, mu, dt, blowup;
    int noise;
    uint64_t seed;
} run_case;

/* Runs the ensemble of R replicas on path simd; NULL with *skip = 1 if the CPU lacks it. */
static am_ensemble_result *run_simd(const am_problem *p, const run_case *c, const uint64_t *k,
                                    size_t ngrid, size_t R, int simd, int *skip)
{
    size_t d = p->dim;
    am_sde_pca_params pp = am_sde_pca_params_default();
    pp.eta = c->eta;
    pp.mu = c->mu;
    pp.sampler = c->model == M_DENSE ? AM_SDE_SAMPLER_DENSE : AM_SDE_SAMPLER_FAST;
    pp.coords = 1;
    pp.blowup = c->blowup;
    pp.initial = mixed_v0;
    pp.initial_ctx = &d;
    am_status st;
    am_sde_pca *m =
        c->model == M_OU ? am_sde_pca_ou_alloc(p, &pp, &st) : am_sde_pca_global_alloc(p, &pp, &st);
    cr_assert_not_null(m, "alloc: status %d", (int)st);
    am_sde_pca_set_simd(m, simd);
    *skip = am_sde_pca_simd(m) != simd;
    am_sde_params sp = am_sde_params_default();
    sp.dt = c->dt;
    sp.noise = c->noise;
    sp.seed = c->seed;
    sp.blowup = am_sde_pca_state_blowup(m);
    am_sde_model *sm =
        am_sde_model_alloc(am_sde_pca_system(m), &sp, am_sde_pca_observer(m), &st, NULL, 0);
    cr_assert_not_null(sm, "model alloc: status %d", (int)st);
    cr_assert_eq(am_sde_model_get(sm)->advance_batch != NULL, simd != AM_SDE_SIMD_SCALAR,
                 "simd %d: batch callback", simd);
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = R;
    ep.threads = 1;
    am_ensemble_result *res = NULL;
    st = am_ensemble_run(am_sde_model_get(sm), k, ngrid, &ep, &res);
    cr_assert_eq(st, AM_OK, "ensemble: status %d", (int)st);
    am_sde_model_free(sm);
    am_sde_pca_free(m);
    return res;
}

/* 1 if the two results are the same bytes. */
static int same_result(const am_ensemble_result *a, const am_ensemble_result *b)
{
    if (a->ngrid != b->ngrid || a->nobs != b->nobs || a->replicas != b->replicas ||
        a->diverged != b->diverged)
        return 0;
    if (memcmp(a->alive, b->alive, a->ngrid * sizeof *a->alive)) return 0;
    return memcmp(a->obs, b->obs, a->ngrid * a->nobs * sizeof *a->obs) == 0;
}

/* Every batched path against one replica at a time for one setting; returns how many
 * paths ran. */
static int compare_paths(const am_problem *p, const run_case *c, const uint64_t *k, size_t ngrid,
                         size_t R, const char *what)
{
    int skip, ran = 0;
    am_ensemble_result *ref = run_simd(p, c, k, ngrid, R, AM_SDE_SIMD_SCALAR, &skip);
    for (int simd = AM_SDE_SIMD_PORTABLE; simd <= AM_SDE_SIMD_AVX512; simd++) {
        am_ensemble_result *res = run_simd(p, c, k, ngrid, R, simd, &skip);
        if (!skip) {
            ran++;
            cr_assert(same_result(ref, res),
                      "%s: path %d differs from one replica at a time (d=%zu R=%zu model %s "
                      "noise %d eta %g mu %g dt %g; diverged %zu vs %zu)",
                      what, simd, p->dim, R, model_names[c->model], c->noise, c->eta, c->mu, c->dt,
                      res->diverged, ref->diverged);
        }
        am_ensemble_result_free(res);
    }
    am_ensemble_result_free(ref);
    return ran;
}

/* Saved steps with a repeated index, single steps and intervals longer than a batch of
 * normals. */
static const uint64_t grid[] = {0, 1, 1, 4, 30, 31, 90, 150, 151, 240};
enum { NGRID = sizeof grid / sizeof grid[0] };

static run_case base_case(model_case model, int noise)
{
    run_case c = {model, 0.01, 0.7, 0.02, 1e6, noise, 77};
    return c;
}

Test(sde_batch, every_distribution_model_dimension_replicas)
{
    int ran = 0;
    for (size_t di = 0; di < NDISTS; di++)
        for (size_t ni = 0; ni < sizeof dims / sizeof dims[0]; ni++) {
            am_problem *p = make_problem(dims[ni], dists[di].kind, dists[di].nu, 0);
            for (int model = M_FAST; model <= M_OU; model++)
                for (size_t ri = 0; ri < sizeof reps / sizeof reps[0]; ri++) {
                    run_case c = base_case((model_case)model, 1);
                    ran += compare_paths(p, &c, grid, NGRID, reps[ri], dists[di].name);
                }
            /* drift only (the ODE limit by explicit Euler), both models */
            for (int model = M_FAST; model <= M_OU; model += 2) {
                run_case c = base_case((model_case)model, 0);
                ran += compare_paths(p, &c, grid, NGRID, 13, dists[di].name);
            }
            am_problem_free(p);
        }
    /* the portable path runs on every CPU */
    cr_assert_geq(ran, 5 * 5 * (3 * 4 + 2), "only %d batched runs compared", ran);
}

Test(sde_batch, rotated_basis_and_momentum)
{
    const double mus[] = {0, 0.5, 0.9};
    for (size_t di = 0; di < NDISTS; di++)
        for (size_t mi = 0; mi < 3; mi++) {
            size_t d = mi % 2 ? 7 : 4;
            am_problem *p = make_problem(d, dists[di].kind, dists[di].nu, 12345);
            for (int model = M_FAST; model <= M_OU; model++) {
                run_case c = base_case((model_case)model, 1);
                c.mu = mus[mi];
                c.seed = 9 + mi;
                char what[128];
                snprintf(what, sizeof what, "rotated, dist %s", dists[di].name);
                compare_paths(p, &c, grid, NGRID, 19, what);
            }
            am_problem_free(p);
        }
}

/* A data set's empirical distribution (kind AM_DIST_DATA, a dense eigenbasis): signs on even
 * features (fourth cumulants < 0), normals on odd ones, so k4 has both signs. */
static am_problem *data_problem(size_t d)
{
    enum { N = 400 };
    double *x = malloc(N * d * sizeof *x);
    cr_assert_not_null(x);
    am_rng r;
    am_rng_init(&r, 31, 0, AM_STREAM_TEST_FIRST, 0);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < d; j++) {
            double scale = 2.0 - 1.5 * (double)j / (double)d;
            double v = j % 2 ? am_rng_gaussian(&r) : (am_rng_u64(&r) >> 63 ? 1.0 : -1.0);
            x[i * d + j] = scale * v + (j ? 0.3 * x[i * d] : 0.0);
        }
    am_datamoments *dm = NULL;
    char err[256] = "";
    cr_assert_eq(am_datamoments_build(N, d, NULL, x, 0, &dm, err, sizeof err), AM_OK, "%s", err);
    am_status st;
    am_problem *p = am_problem_alloc_data(dm, &st, err, sizeof err);
    cr_assert_not_null(p, "data problem d=%zu: %s", d, err);
    return p;
}

Test(sde_batch, data_set_distribution)
{
    int ran = 0;
    for (size_t ni = 0; ni < sizeof dims / sizeof dims[0]; ni++) {
        am_problem *p = data_problem(dims[ni]);
        for (int model = M_FAST; model <= M_OU; model++) {
            run_case c = base_case((model_case)model, 1);
            ran += compare_paths(p, &c, grid, NGRID, 13, "data set");
        }
        am_problem_free(p);
    }
    cr_assert_geq(ran, 5 * 3, "only %d batched runs compared", ran);
}

/* Large noise: replicas diverge at different saved times and leave their lane group. */
Test(sde_batch, replicas_diverging_at_different_times)
{
    const uint64_t k[] = {0, 10, 20, 40, 60, 80, 100, 130, 160, 200};
    /* eta per distribution (global model; mu 0.9, blowup 4), the OU model's blowup */
    const double eta_g[4] = {0.006, 0.012, 0.008, 0.004}, blow_ou = 0.5;
    for (size_t di = 0; di < 4; di++)
        for (int model = M_FAST; model <= M_OU; model++) {
            am_problem *p = make_problem(4, dists[di].kind, dists[di].nu, 0);
            run_case c = base_case((model_case)model, 1);
            c.mu = 0.9;
            c.dt = 0.01;
            c.eta = model == M_OU ? 0.001 : eta_g[di];
            c.blowup = model == M_OU ? blow_ou : 4;
            int skip;
            am_ensemble_result *ref = run_simd(p, &c, k, 10, 21, AM_SDE_SIMD_SCALAR, &skip);
            int drops = 0;
            for (size_t g = 1; g < 10; g++)
                drops += ref->alive[g] < ref->alive[g - 1];
            cr_assert(ref->diverged > 0 && ref->diverged < 21 && drops >= 2,
                      "dist %s model %s: the setting should let some but not all of 21 "
                      "replicas diverge, at different saved times: diverged %zu, alive %zu %zu "
                      "%zu %zu %zu",
                      dists[di].name, model_names[model], ref->diverged, ref->alive[1],
                      ref->alive[3], ref->alive[5], ref->alive[7], ref->alive[9]);
            am_ensemble_result_free(ref);
            compare_paths(p, &c, k, 10, 21, dists[di].name);
            am_problem_free(p);
        }
}

/* The comparison can fail: a 1-ulp change of mu or of dt on the batched side gives other
 * bytes, for the Gaussian and the Rademacher sampler and the OU limit. */
Test(sde_batch, comparison_detects_one_ulp)
{
    const am_dist_kind kinds[2] = {AM_DIST_GAUSSIAN, AM_DIST_RADEMACHER};
    for (int ki = 0; ki < 2; ki++)
        for (int model = M_FAST; model <= M_OU; model += 2)
            for (int which = 0; which < 2; which++) {
                am_problem *p = make_problem(4, kinds[ki], 0, 0);
                run_case c = base_case((model_case)model, 1);
                int skip;
                am_ensemble_result *a = run_simd(p, &c, grid, NGRID, 13, AM_SDE_SIMD_SCALAR, &skip);
                am_ensemble_result *same =
                    run_simd(p, &c, grid, NGRID, 13, AM_SDE_SIMD_PORTABLE, &skip);
                cr_assert(same_result(a, same), "dist %d model %s: unperturbed runs differ",
                          (int)kinds[ki], model_names[model]);
                if (which == 0)
                    c.mu = nextafter(c.mu, 1.0);
                else
                    c.dt = nextafter(c.dt, 1.0);
                am_ensemble_result *b =
                    run_simd(p, &c, grid, NGRID, 13, AM_SDE_SIMD_PORTABLE, &skip);
                cr_assert_not(same_result(a, b),
                              "dist %d model %s: a 1-ulp change of %s compared equal",
                              (int)kinds[ki], model_names[model], which ? "dt" : "mu");
                am_ensemble_result_free(a);
                am_ensemble_result_free(same);
                am_ensemble_result_free(b);
                am_problem_free(p);
            }
}

/* The model takes the best path by default, honours AMSGD_SIMD, and runs one replica at a
 * time above d = 16. */
Test(sde_batch, default_path_and_environment)
{
    size_t d = 4;
    am_problem *p = make_problem(d, AM_DIST_GAUSSIAN, 0, 0);
    am_sde_pca_params pp = am_sde_pca_params_default();
    pp.initial = mixed_v0;
    pp.initial_ctx = &d;
    am_status st;
    unsetenv("AMSGD_SIMD");
    am_sde_pca *m = am_sde_pca_global_alloc(p, &pp, &st);
    int best = am_sde_pca_simd(m);
    cr_assert_geq(best, AM_SDE_SIMD_PORTABLE, "default path %d", best);
    cr_assert_not_null(am_sde_pca_system(m)->advance_lanes);
    am_sde_pca_set_simd(m, 99); /* out of range: the best */
    cr_assert_eq(am_sde_pca_simd(m), best);
    am_sde_pca_free(m);
    setenv("AMSGD_SIMD", "scalar", 1);
    m = am_sde_pca_ou_alloc(p, &pp, &st);
    cr_assert_eq(am_sde_pca_simd(m), AM_SDE_SIMD_SCALAR);
    cr_assert_null(am_sde_pca_system(m)->advance_lanes);
    am_sde_pca_free(m);
    setenv("AMSGD_SIMD", "portable", 1);
    m = am_sde_pca_global_alloc(p, &pp, &st);
    cr_assert_eq(am_sde_pca_simd(m), AM_SDE_SIMD_PORTABLE);
    am_sde_pca_free(m);
    unsetenv("AMSGD_SIMD");
    am_problem_free(p);
    /* above the batched dimensions: one replica at a time */
    d = 17;
    p = make_problem(d, AM_DIST_GAUSSIAN, 0, 0);
    m = am_sde_pca_global_alloc(p, &pp, &st);
    cr_assert_eq(am_sde_pca_simd(m), AM_SDE_SIMD_SCALAR);
    am_sde_pca_set_simd(m, AM_SDE_SIMD_PORTABLE);
    cr_assert_eq(am_sde_pca_simd(m), AM_SDE_SIMD_SCALAR);
    cr_assert_null(am_sde_pca_system(m)->advance_lanes);
    am_sde_pca_free(m);
    am_problem_free(p);
}

/* The command prints the same bytes with AMSGD_SIMD=scalar as with its default path. */
Test(sde_batch, cli_scalar_and_default_same_bytes)
{
    const char *const args[] = {
        "sde --eta 1e-3 --mu 0.5 --time 0.5 --grid 11 --replicas 21 --threads 1 --coords",
        "sde --dist rademacher --init e:1 --eta 1e-3 --time 0.5 --grid 11 --replicas 21 "
        "--threads 2 --format json",
        "sde --model ou --mu 0.9 --dim 3 --eta 1e-3 --time 0.5 --grid 7 --replicas 13",
        "sde --dist uniform --sampler dense --dim 5 --eta 1e-3 --time 0.3 --replicas 9"};
    for (size_t a = 0; a < sizeof args / sizeof args[0]; a++) {
        unsetenv("AMSGD_SIMD");
        test_run def = test_amsgd(args[a]);
        setenv("AMSGD_SIMD", "scalar", 1);
        test_run sca = test_amsgd(args[a]);
        unsetenv("AMSGD_SIMD");
        cr_assert_eq(def.status, 0, "amsgd %s: exit %d: %s", args[a], def.status, def.err);
        cr_assert_eq(sca.status, 0, "AMSGD_SIMD=scalar amsgd %s: exit %d", args[a], sca.status);
        cr_assert_str_eq(def.out, sca.out, "amsgd %s: output differs with AMSGD_SIMD=scalar",
                         args[a]);
        test_run_free(&def);
        test_run_free(&sca);
    }
}
