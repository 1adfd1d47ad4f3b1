/*
 * test_sde.c -- the Euler–Maruyama engine and the streaming-PCA SDE models: noise-free
 * global SDE against the ODE closed form (order 1 in dt), EM on a scalar OU process (exact
 * mean and variance, exact discrete variance, weak order 1), the covariance C(V) against
 * real data and both noise samplers against C(V), the local OU model against its exact
 * discrete variance, thread-count invariance, and the `amsgd sde` command-line contract.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "../core/am_rng.h"
#include "../montecarlo/am_data.h"
#include "../core/am_ensemble.h"
#include "../solvers/am_sde.h"
#include "test_util.h"

/* ---- helpers ---- */

static am_problem *sde_problem(size_t d, const double *l, am_dist_kind kind, uint64_t rot)
{
    am_dist dist = {kind, 0};
    am_problem *p = am_problem_alloc(d, l, dist, rot, NULL, NULL, 0);
    cr_assert_not_null(p, "problem d=%zu dist=%d rot=%llu", d, (int)kind, (unsigned long long)rot);
    return p;
}

/* A fixed unit vector (original coordinates), the same for every replica. */
static void sde_fixed_v0(uint64_t replica, double *v0, const void *ctx)
{
    (void)replica;
    const size_t *d = ctx;
    double n = 0;
    for (size_t i = 0; i < *d; i++) {
        v0[i] = 0.3 + 0.1 * (double)i;
        n += v0[i] * v0[i];
    }
    for (size_t i = 0; i < *d; i++)
        v0[i] /= sqrt(n);
}

/* ---- noise-free global SDE = ODE ---- */

/* Closed form of theory.md §2: H_i(t) = H_i(0) e^{l_i t c} / sqrt(sum_j H_j(0)^2 e^{2 l_j t c}). */
static void sde_ode_closed(size_t d, const double *l, const double *h0, double t, double c,
                           double *h)
{
    double s = 0, lmax = l[0];
    for (size_t j = 0; j < d; j++)
        s += h0[j] * h0[j] * exp(2 * (l[j] - lmax) * t * c);
    for (size_t i = 0; i < d; i++)
        h[i] = h0[i] * exp((l[i] - lmax) * t * c) / sqrt(s);
}

Test(sde, noise_free_global_equals_ode_order1)
{
    const double l[4] = {4, 3, 2, 1};
    const size_t d = 4;
    const double mu = 0.5, T = 1.0;
    am_problem *p = sde_problem(d, l, AM_DIST_GAUSSIAN, 0);
    am_sde_pca_params pp = am_sde_pca_params_default();
    pp.eta = 1e-3;
    pp.mu = mu;
    pp.initial = sde_fixed_v0;
    pp.initial_ctx = &d;
    am_status st;
    am_sde_pca *m = am_sde_pca_global_alloc(p, &pp, &st);
    cr_assert_not_null(m, "global alloc: %s", am_strerror(st));
    double h0[4], hc[4], errs[3];
    sde_fixed_v0(0, h0, &d);
    sde_ode_closed(d, l, h0, T, 1 / (1 - mu), hc);
    const double dts[3] = {0.01, 0.005, 0.0025};
    for (int k = 0; k < 3; k++) {
        am_sde_params sp = am_sde_params_default();
        sp.dt = dts[k];
        sp.noise = 0;
        am_sde_path *path = am_sde_path_alloc(am_sde_pca_system(m), &sp, &st, NULL, 0);
        cr_assert_not_null(path);
        am_sde_path_start(path, 0, h0);
        uint64_t n = (uint64_t)llround(T / dts[k]);
        cr_assert_eq(am_sde_path_run(path, n), 0, "dt=%g diverged", dts[k]);
        const double *h = am_sde_path_state(path);
        errs[k] = 0;
        for (size_t i = 0; i < d; i++)
            errs[k] = fmax(errs[k], fabs(h[i] - hc[i]));
        am_sde_path_free(path);
    }
    /* explicit Euler: global error C dt, so halving dt halves it (up to O(dt^2)) */
    cr_assert(errs[0] < 0.05 && errs[0] > 1e-6, "dt=0.01: max error %.3g", errs[0]);
    for (int k = 0; k < 2; k++) {
        double ratio = errs[k] / errs[k + 1];
        cr_assert(ratio > 1.85 && ratio < 2.15,
                  "mu=%g T=%g: error ratio dt=%g / dt=%g is %.4f (errors %.3g, %.3g), expected 2",
                  mu, T, dts[k], dts[k + 1], ratio, errs[k], errs[k + 1]);
    }
    am_sde_pca_free(m);
    am_problem_free(p);
}

/* Rotated eigenbasis: the model simulates h = Q^T V; its err observable must match the
 * closed form through the rotation of v0. */
Test(sde, noise_free_rotated_error_matches_closed_form)
{
    const double l[5] = {5, 4, 2, 1.5, 1};
    const size_t d = 5;
    am_problem *p = sde_problem(d, l, AM_DIST_GAUSSIAN, 77);
    am_sde_pca_params pp = am_sde_pca_params_default();
    pp.initial = sde_fixed_v0;
    pp.initial_ctx = &d;
    am_status st;
    am_sde_pca *m = am_sde_pca_global_alloc(p, &pp, &st);
    cr_assert_not_null(m);
    am_sde_params sp = am_sde_params_default();
    sp.dt = 1e-3;
    sp.noise = 0;
    am_sde_model *sm =
        am_sde_model_alloc(am_sde_pca_system(m), &sp, am_sde_pca_observer(m), &st, NULL, 0);
    cr_assert_not_null(sm);
    uint64_t k[3] = {0, 300, 600};
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = 1;
    ep.threads = 1;
    am_ensemble_result *res;
    cr_assert_eq(am_ensemble_run(am_sde_model_get(sm), k, 3, &ep, &res), AM_OK);
    double v0[5], h0[5], hc[5];
    sde_fixed_v0(0, v0, &d);
    for (size_t j = 0; j < d; j++) {
        h0[j] = 0;
        for (size_t i = 0; i < d; i++)
            h0[j] += p->q[i * d + j] * v0[i];
    }
    for (int g = 0; g < 3; g++) {
        sde_ode_closed(d, l, h0, (double)k[g] * sp.dt, 1.0, hc);
        double e = 1 - hc[0] * hc[0];
        double got = res->obs[g * 2].mean;
        /* Euler error O(dt) on [0, 0.6]: bound generously by 20 dt, still far below e */
        cr_assert(fabs(got - e) < 20 * sp.dt * e + 1e-14, "t=%g: err %.8g, closed form %.8g",
                  (double)k[g] * sp.dt, got, e);
        /* Euler leaves the sphere by dt^2 |b|^2 per step: |V| - 1 in [0, O(dt)] */
        double nv = res->obs[g * 2 + 1].mean;
        cr_assert(nv >= 1 - 1e-12 && nv - 1 < sp.dt, "t=%g: |V| = %.12g, expected 1 + O(dt)",
                  (double)k[g] * sp.dt, nv);
    }
    am_ensemble_result_free(res);
    am_sde_model_free(sm);
    am_sde_pca_free(m);
    am_problem_free(p);
}

/* ---- scalar OU dX = -a X dt + s dB through the generic engine and the ensemble ---- */

typedef struct {
    double a, s, x0;
} sde_ou1;

static void sde_ou1_drift(double t, const double *x, double *out, const void *params, void *scr)
{
    (void)t;
    (void)scr;
    const sde_ou1 *o = params;
    out[0] = -o->a * x[0];
}

static void sde_ou1_noise(double t, const double *x, double sqrt_dt, am_rng *rng, double *out,
                          const void *params, void *scr)
{
    (void)t;
    (void)x;
    (void)scr;
    const sde_ou1 *o = params;
    out[0] = o->s * sqrt_dt * am_rng_gaussian(rng);
}

static am_status sde_ou1_initial(uint64_t replica, double *x0, const void *params)
{
    (void)replica;
    const sde_ou1 *o = params;
    x0[0] = o->x0;
    return AM_OK;
}

static void sde_ou1_observe(const double *x, double *obs, const void *params)
{
    (void)params;
    obs[0] = x[0];
    obs[1] = x[0] * x[0];
}

/* Runs R replicas of the scalar OU to step n; returns stats of X and X^2 at step n. */
static void sde_ou1_run(const sde_ou1 *o, double dt, uint64_t n, size_t R, uint64_t seed,
                        int threads, am_stats *x, am_stats *x2)
{
    am_sde_system sys = {1, 0, sde_ou1_drift, sde_ou1_noise, o, NULL};
    am_sde_observer ob = {2, sde_ou1_initial, sde_ou1_observe, o};
    am_sde_params sp = am_sde_params_default();
    sp.dt = dt;
    sp.seed = seed;
    sp.blowup = 1e100;
    am_status st;
    am_sde_model *m = am_sde_model_alloc(&sys, &sp, &ob, &st, NULL, 0);
    cr_assert_not_null(m, "model: %s", am_strerror(st));
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = R;
    ep.threads = threads;
    am_ensemble_result *res;
    cr_assert_eq(am_ensemble_run(am_sde_model_get(m), &n, 1, &ep, &res), AM_OK);
    cr_assert_eq(res->alive[0], R);
    *x = res->obs[0];
    *x2 = res->obs[1];
    am_ensemble_result_free(res);
    am_sde_model_free(m);
}

/* Exact EM moments: X_n = r^n x0 + s sqrt(dt) sum r^k Z, r = 1 - a dt. */
static double sde_em_mean(const sde_ou1 *o, double dt, uint64_t n)
{
    return pow(1 - o->a * dt, (double)n) * o->x0;
}
static double sde_em_var(const sde_ou1 *o, double dt, uint64_t n)
{
    double r2 = (1 - o->a * dt) * (1 - o->a * dt);
    return o->s * o->s * dt * (1 - pow(r2, (double)n)) / (1 - r2);
}

Test(sde, em_scalar_ou_mean_variance)
{
    const sde_ou1 o = {1.0, 0.8, 1.0};
    const double dt = 2e-3, T = 1.0;
    const uint64_t n = 500;
    const size_t R = 20000;
    am_stats x, x2;
    sde_ou1_run(&o, dt, n, R, 11, 1, &x, &x2);
    double mean_c = o.x0 * exp(-o.a * T);
    double var_c = o.s * o.s * (1 - exp(-2 * o.a * T)) / (2 * o.a);
    double mean_d = sde_em_mean(&o, dt, n), var_d = sde_em_var(&o, dt, n);
    double se_m = sqrt(var_c / (double)R), se_v = var_c * sqrt(2.0 / (double)(R - 1));
    double var = am_stats_var(&x);
    /* at dt = 2e-3 the EM bias (~1e-3 relative) is far below the SEs: both must agree */
    cr_assert(fabs(x.mean - mean_c) < 4.5 * se_m,
              "a=%g s=%g x0=%g T=%g dt=%g R=%zu: mean %.6g, exact %.6g, 4.5 SE %.2g", o.a, o.s,
              o.x0, T, dt, R, x.mean, mean_c, 4.5 * se_m);
    cr_assert(fabs(var - var_c) < 4.5 * se_v,
              "a=%g s=%g x0=%g T=%g dt=%g R=%zu: variance %.6g, exact %.6g, 4.5 SE %.2g", o.a, o.s,
              o.x0, T, dt, R, var, var_c, 4.5 * se_v);
    cr_assert(fabs(x.mean - mean_d) < 4.5 * se_m, "mean %.6g vs EM exact %.6g", x.mean, mean_d);
    cr_assert(fabs(var - var_d) < 4.5 * se_v, "variance %.6g vs EM exact %.6g", var, var_d);
}

/* Weighted least-squares slope of y on x with weights w; se of the slope in *se. */
static double sde_wls_slope(int n, const double *x, const double *y, const double *w, double *se)
{
    double sw = 0, sx = 0, sy = 0;
    for (int i = 0; i < n; i++) {
        sw += w[i];
        sx += w[i] * x[i];
        sy += w[i] * y[i];
    }
    double xb = sx / sw, yb = sy / sw, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sxx += w[i] * (x[i] - xb) * (x[i] - xb);
        sxy += w[i] * (x[i] - xb) * (y[i] - yb);
    }
    *se = sqrt(1 / sxx);
    return sxy / sxx;
}

Test(sde, em_scalar_ou_weak_order_one)
{
    const sde_ou1 o = {2.0, 1.0, 0.0};
    const double T = 2.0;
    const double dts[4] = {0.2, 0.1, 0.05, 0.025};
    const size_t R = 200000;
    const double vc = o.s * o.s * (1 - exp(-2 * o.a * T)) / (2 * o.a);
    double lx[4], ly[4], w[4], ly_exact[4], w1[4];
    for (int k = 0; k < 4; k++) {
        uint64_t n = (uint64_t)llround(T / dts[k]);
        am_stats x, x2;
        sde_ou1_run(&o, dts[k], n, R, 100 + (uint64_t)k, 1, &x, &x2);
        double vd = sde_em_var(&o, dts[k], n);
        /* SE of E[X^2] from the sample variance of X^2 */
        double se = am_stats_sem(&x2);
        cr_assert(fabs(x2.mean - vd) < 4.5 * se,
                  "a=%g s=%g T=%g dt=%g R=%zu: E[X^2] %.6g vs exact EM value %.6g (4.5 SE %.2g)",
                  o.a, o.s, T, dts[k], R, x2.mean, vd, 4.5 * se);
        double bias = x2.mean - vc;
        if (k == 3) /* refuse to fit unless the bias at the finest step is well above the noise */
            cr_assert(vd - vc > 5 * se, "finest bias %.3g is not above 5 SE %.3g", vd - vc, 5 * se);
        cr_assert(bias > 0, "dt=%g: measured bias %.3g <= 0", dts[k], bias);
        lx[k] = log(dts[k]);
        ly[k] = log(bias);
        w[k] = bias * bias / (se * se);
        ly_exact[k] = log(vd - vc);
        w1[k] = 1;
    }
    double se_p, se_dummy;
    double p = sde_wls_slope(4, lx, ly, w, &se_p);
    /* slope of the exact EM bias on the same ladder: 1 plus the O(a dt) curvature */
    double p_exact = sde_wls_slope(4, lx, ly_exact, w1, &se_dummy);
    cr_assert(fabs(p_exact - 1) < 0.1, "exact EM bias slope %.4f on the ladder", p_exact);
    cr_assert(se_p < 0.1, "order fit too noisy: SE %.3g (R=%zu)", se_p, R);
    cr_log_info("weak order: fitted %.4f +- %.4f, exact-bias slope %.4f", p, se_p, p_exact);
    cr_assert(fabs(p - p_exact) < 4.5 * se_p,
              "a=%g T=%g: fitted weak order %.4f +- %.4f, exact-bias slope %.4f", o.a, T, p, se_p,
              p_exact);
}

/* ---- covariance C(V) ---- */

/* C = P M P in eigen-coordinates (standard basis), from the formula of theory.md §3. */
static void sde_cov_formula(size_t d, const double *l, const double *m4, const double *h, double *C)
{
    double q = 0, M[36], P[36], T[36];
    for (size_t i = 0; i < d; i++)
        q += l[i] * h[i] * h[i];
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < d; j++) {
            M[i * d + j] = l[i] * h[i] * l[j] * h[j] +
                           (i == j ? l[i] * q + (m4[i] - 3 * l[i] * l[i]) * h[i] * h[i] : 0);
            P[i * d + j] = (i == j) - h[i] * h[j];
        }
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < d; j++) {
            T[i * d + j] = 0;
            for (size_t k = 0; k < d; k++)
                T[i * d + j] += P[i * d + k] * M[k * d + j];
        }
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < d; j++) {
            C[i * d + j] = 0;
            for (size_t k = 0; k < d; k++)
                C[i * d + j] += T[i * d + k] * P[k * d + j];
        }
}

/* Empirical second moments of N draws (mean zero) against C, 5 SE per entry. */
typedef void (*sde_draw_fn)(uint64_t k, double *out, const void *ctx);

static void sde_check_cov(size_t d, const double *C, sde_draw_fn draw, const void *ctx, long N,
                          const char *what)
{
    double S[36] = {0}, S2[36] = {0}, mean[6] = {0}, out[6];
    for (long k = 0; k < N; k++) {
        draw((uint64_t)k, out, ctx);
        for (size_t i = 0; i < d; i++) {
            mean[i] += out[i];
            for (size_t j = 0; j < d; j++) {
                double v = out[i] * out[j];
                S[i * d + j] += v;
                S2[i * d + j] += v * v;
            }
        }
    }
    double n = (double)N;
    for (size_t i = 0; i < d; i++) {
        double sei = sqrt(C[i * d + i] / n);
        cr_assert(fabs(mean[i] / n) < 5 * sei + 1e-12, "%s: mean_%zu = %.4g, 5 SE %.2g", what, i,
                  mean[i] / n, 5 * sei);
        for (size_t j = 0; j < d; j++) {
            double e = S[i * d + j] / n, e2 = S2[i * d + j] / n;
            double se = sqrt(fmax(e2 - e * e, 0) / n);
            cr_assert(fabs(e - C[i * d + j]) < 5 * se + 1e-12,
                      "%s: C[%zu][%zu] empirical %.6g, formula %.6g, 5 SE %.2g", what, i, j, e,
                      C[i * d + j], 5 * se);
        }
    }
}

typedef struct {
    const am_problem *p;
    const double *h;
    const am_sde_system *sys;
} sde_cov_ctx;

/* One draw of P X X^T V with real data X (standard eigenbasis: X = Y). */
static void sde_draw_data(uint64_t k, double *out, const void *vctx)
{
    const sde_cov_ctx *c = vctx;
    size_t d = c->p->dim;
    double y[6], a = 0;
    am_rng r;
    am_rng_init(&r, 3, 0, AM_STREAM_DATA, k);
    am_data_draw(c->p, &r, y);
    for (size_t i = 0; i < d; i++)
        a += y[i] * c->h[i];
    for (size_t i = 0; i < d; i++)
        out[i] = a * y[i];
    /* subtract the mean s = Sigma h, then project */
    double hy = 0;
    for (size_t i = 0; i < d; i++) {
        out[i] -= c->p->lambda[i] * c->h[i];
        hy += c->h[i] * out[i];
    }
    for (size_t i = 0; i < d; i++)
        out[i] -= c->h[i] * hy;
}

/* One draw of the model's noise with sqrt(dt) = 1 (eta = 1, mu = 0: scale 1). */
static void sde_draw_noise(uint64_t k, double *out, const void *vctx)
{
    const sde_cov_ctx *c = vctx;
    am_rng r;
    am_rng_init(&r, 9, 0, AM_STREAM_NOISE, k);
    char scratch[8 * 64];
    c->sys->noise(0, c->h, 1.0, &r, out, c->sys->params, scratch);
}

static void sde_cov_case(am_dist_kind kind, am_sde_sampler sampler, const double *h,
                         int expect_negative, int with_data)
{
    const double l[4] = {4, 3, 2, 1};
    const size_t d = 4;
    am_problem *p = sde_problem(d, l, kind, 0);
    double m4[4], C[16], q = 0;
    for (size_t i = 0; i < d; i++) {
        m4[i] = am_problem_m4(p, i, NULL);
        q += l[i] * h[i] * h[i];
    }
    /* the branch under test: a negative diagonal entry of M or not */
    int neg = 0;
    for (size_t i = 0; i < d; i++)
        if (l[i] * q + (m4[i] - 3 * l[i] * l[i]) * h[i] * h[i] < 0) neg = 1;
    cr_assert_eq(neg, expect_negative, "dist %s: negative diagonal %d", am_problem_dist_name(kind),
                 neg);
    sde_cov_formula(d, l, m4, h, C);
    am_sde_pca_params pp = am_sde_pca_params_default();
    pp.eta = 1;
    pp.sampler = sampler;
    pp.initial = sde_fixed_v0;
    pp.initial_ctx = &d;
    am_status st;
    am_sde_pca *m = am_sde_pca_global_alloc(p, &pp, &st);
    cr_assert_not_null(m);
    cr_assert(am_sde_pca_system(m)->scratch_bytes <= 8 * 64);
    sde_cov_ctx ctx = {p, h, am_sde_pca_system(m)};
    char what[128];
    snprintf(what, sizeof what, "%s %s sampler h=(%g,%g,%g,%g)", am_problem_dist_name(kind),
             sampler == AM_SDE_SAMPLER_FAST ? "fast" : "dense", h[0], h[1], h[2], h[3]);
    sde_check_cov(d, C, sde_draw_noise, &ctx, 200000, what);
    if (with_data) {
        snprintf(what, sizeof what, "%s data P X X^T V h=(%g,%g,%g,%g)", am_problem_dist_name(kind),
                 h[0], h[1], h[2], h[3]);
        sde_check_cov(d, C, sde_draw_data, &ctx, 200000, what);
    }
    am_sde_pca_free(m);
    am_problem_free(p);
}

/* Near e_1 (non-unit V): lambda_1 h_1^2 > q/2, the Rademacher and uniform diagonals are
 * negative at index 1. */
static const double sde_h_near[4] = {1.05, 0.2, -0.15, 0.1};
static const double sde_h_mixed[4] = {0.5, 0.6, -0.5, 0.4};

Test(sde, covariance_formula_matches_data_and_fast_gaussian)
{
    sde_cov_case(AM_DIST_GAUSSIAN, AM_SDE_SAMPLER_FAST, sde_h_mixed, 0, 1);
}
Test(sde, covariance_rademacher_fast_negative_diagonal)
{
    sde_cov_case(AM_DIST_RADEMACHER, AM_SDE_SAMPLER_FAST, sde_h_near, 1, 1);
}
Test(sde, covariance_rademacher_fast_mixed)
{
    sde_cov_case(AM_DIST_RADEMACHER, AM_SDE_SAMPLER_FAST, sde_h_mixed, 0, 1);
}
Test(sde, covariance_rademacher_dense)
{
    sde_cov_case(AM_DIST_RADEMACHER, AM_SDE_SAMPLER_DENSE, sde_h_near, 1, 0);
}
Test(sde, covariance_uniform_fast_negative_diagonal)
{
    sde_cov_case(AM_DIST_UNIFORM, AM_SDE_SAMPLER_FAST, sde_h_near, 1, 1);
}

/* The noise is sqrt(eta) sqrt(dt)/(1-mu) times the unit-scale draw, on the same normals. */
Test(sde, noise_scale_sqrt_eta_dt_over_one_minus_mu)
{
    const double l[4] = {4, 3, 2, 1};
    const size_t d = 4;
    const double eta = 0.25, mu = 0.2, sqdt = 0.3, factor = sqrt(eta) * sqdt / (1 - mu);
    for (int kind = AM_DIST_GAUSSIAN; kind <= AM_DIST_RADEMACHER; kind++) {
        am_problem *p = sde_problem(d, l, (am_dist_kind)kind, 0);
        am_sde_pca_params pp = am_sde_pca_params_default();
        pp.initial = sde_fixed_v0;
        pp.initial_ctx = &d;
        pp.eta = 1;
        pp.mu = 0;
        am_status st;
        am_sde_pca *unit = am_sde_pca_global_alloc(p, &pp, &st);
        pp.eta = eta;
        pp.mu = mu;
        am_sde_pca *scaled = am_sde_pca_global_alloc(p, &pp, &st);
        cr_assert(unit && scaled);
        const am_sde_system *su = am_sde_pca_system(unit), *ss = am_sde_pca_system(scaled);
        double a[4], b[4], scratch[16];
        am_rng r;
        am_rng_init(&r, 4, 2, AM_STREAM_NOISE, 7);
        su->noise(0, sde_h_near, 1.0, &r, a, su->params, scratch);
        am_rng_init(&r, 4, 2, AM_STREAM_NOISE, 7);
        ss->noise(0, sde_h_near, sqdt, &r, b, ss->params, scratch);
        for (size_t i = 0; i < d; i++)
            cr_assert(fabs(b[i] - factor * a[i]) <= 1e-13 * fabs(factor * a[i]) + 1e-300,
                      "dist %d eta=%g mu=%g sqrt_dt=%g: coordinate %zu %.17g, expected %.17g", kind,
                      eta, mu, sqdt, i, b[i], factor * a[i]);
        am_sde_pca_free(unit);
        am_sde_pca_free(scaled);
        am_problem_free(p);
    }
}

/* ---- local OU model ---- */

/* The SDE parameters of these tests: eta, mu, the squared eigen-coordinates observed, the
 * initial point init(replica, v0, d) of dimension *d. */
static am_sde_pca_params coord_params(double eta, double mu, am_sde_initial_fn init,
                                      const size_t *d)
{
    am_sde_pca_params pp = am_sde_pca_params_default();
    pp.eta = eta;
    pp.mu = mu;
    pp.coords = 1;
    pp.initial = init;
    pp.initial_ctx = d;
    return pp;
}

static void sde_e1(uint64_t replica, double *v0, const void *ctx)
{
    (void)replica;
    const size_t *d = ctx;
    for (size_t i = 0; i < *d; i++)
        v0[i] = i == 0;
}

/* From U(0) = 0, E[err(t_n)] = eta sum_i Var U_i(n) with the exact EM variance
 * amp_i^2 dt (1 - r_i^{2n}) / (1 - r_i^2), r_i = 1 - rate_i dt. */
Test(sde, ou_model_matches_exact_discrete_variance)
{
    const double l[4] = {4, 3, 2, 1};
    const size_t d = 4, R = 4000;
    const double eta = 1e-3, mu = 0.3, dt = 0.01;
    const uint64_t n = 150;
    am_problem *p = sde_problem(d, l, AM_DIST_GAUSSIAN, 0);
    am_sde_pca_params pp = coord_params(eta, mu, sde_e1, &d);
    am_status st;
    am_sde_pca *m = am_sde_pca_ou_alloc(p, &pp, &st);
    cr_assert_not_null(m);
    cr_assert_eq(am_sde_pca_system(m)->dim, d - 1);
    am_sde_params sp = am_sde_params_default();
    sp.dt = dt;
    sp.blowup = am_sde_pca_state_blowup(m);
    am_sde_model *sm =
        am_sde_model_alloc(am_sde_pca_system(m), &sp, am_sde_pca_observer(m), &st, NULL, 0);
    cr_assert_not_null(sm);
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = R;
    ep.threads = 1;
    uint64_t k[2] = {0, n};
    am_ensemble_result *res;
    cr_assert_eq(am_ensemble_run(am_sde_model_get(sm), k, 2, &ep, &res), AM_OK);
    size_t no = res->nobs;
    cr_assert_eq(no, 2 + d);
    double expect = 0;
    for (size_t i = 1; i < d; i++) {
        double rate = (l[0] - l[i]) / (1 - mu), amp2 = l[0] * l[i] / ((1 - mu) * (1 - mu));
        double r2 = (1 - rate * dt) * (1 - rate * dt);
        double var = amp2 * dt * (1 - pow(r2, (double)n)) / (1 - r2);
        expect += eta * var;
        const am_stats *hs = &res->obs[no + 2 + i];
        cr_assert(fabs(hs->mean - eta * var) < 5 * am_stats_sem(hs),
                  "mu=%g eta=%g dt=%g n=%llu: E h_%zu^2 = %.5g, exact EM %.5g (5 SE %.2g)", mu, eta,
                  dt, (unsigned long long)n, i + 1, hs->mean, eta * var, 5 * am_stats_sem(hs));
    }
    const am_stats *e = &res->obs[no];
    cr_assert(fabs(e->mean - expect) < 5 * am_stats_sem(e),
              "mu=%g eta=%g: E err = %.5g, exact EM %.5g (5 SE %.2g)", mu, eta, e->mean, expect,
              5 * am_stats_sem(e));
    cr_assert_eq(res->obs[0].mean, 0.0, "err(0) = %g", res->obs[0].mean);
    cr_assert_eq(res->obs[no + 1].mean, 1.0);
    am_ensemble_result_free(res);
    am_sde_model_free(sm);
    am_sde_pca_free(m);
    am_problem_free(p);
}

/* ---- thread-count invariance and divergence ---- */

static am_ensemble_result *sde_run_global(am_dist_kind kind, int threads, size_t R, double mu,
                                          double eta, double blowup)
{
    const double l[4] = {4, 3, 2, 1};
    static const size_t d = 4;
    am_problem *p = sde_problem(d, l, kind, 0);
    am_sde_pca_params pp = coord_params(eta, mu, sde_fixed_v0, &d);
    am_status st;
    am_sde_pca *m = am_sde_pca_global_alloc(p, &pp, &st);
    cr_assert_not_null(m);
    am_sde_params sp = am_sde_params_default();
    sp.dt = 1e-2;
    sp.seed = 5;
    sp.blowup = blowup;
    am_sde_model *sm =
        am_sde_model_alloc(am_sde_pca_system(m), &sp, am_sde_pca_observer(m), &st, NULL, 0);
    cr_assert_not_null(sm);
    am_ensemble_params ep = am_ensemble_params_default();
    ep.replicas = R;
    ep.threads = threads;
    uint64_t k[4] = {0, 20, 50, 100};
    am_ensemble_result *res;
    cr_assert_eq(am_ensemble_run(am_sde_model_get(sm), k, 4, &ep, &res), AM_OK);
    am_sde_model_free(sm);
    am_sde_pca_free(m);
    am_problem_free(p);
    return res;
}

Test(sde, thread_count_invariance)
{
    for (int kind = AM_DIST_GAUSSIAN; kind <= AM_DIST_RADEMACHER; kind++) {
        am_ensemble_result *a = sde_run_global((am_dist_kind)kind, 1, 300, 0.5, 0.05, 1e6);
        am_ensemble_result *b = sde_run_global((am_dist_kind)kind, 2, 300, 0.5, 0.05, 1e6);
        cr_assert_eq(memcmp(a->obs, b->obs, a->ngrid * a->nobs * sizeof *a->obs), 0,
                     "dist %d: statistics differ between 1 and 2 threads", kind);
        cr_assert_eq(memcmp(a->alive, b->alive, a->ngrid * sizeof *a->alive), 0);
        cr_assert_eq(a->diverged, b->diverged);
        /* the noise is on: replicas differ */
        cr_assert(am_stats_var(&a->obs[3 * a->nobs]) > 0, "dist %d: no spread", kind);
        am_ensemble_result_free(a);
        am_ensemble_result_free(b);
    }
}

Test(sde, divergence_is_counted)
{
    /* huge noise (eta = 50, mu = 0.9): sqrt(eta)/(1-mu) ~ 70, |V| leaves any small bound */
    am_ensemble_result *r = sde_run_global(AM_DIST_GAUSSIAN, 2, 64, 0.9, 50, 3);
    cr_assert_gt(r->diverged, 0, "no replica diverged");
    cr_assert_eq(r->alive[0], 64);
    cr_assert_eq(r->alive[3], 64 - r->diverged);
    cr_assert_eq(r->obs[3 * r->nobs].n, (double)r->alive[3]);
    am_ensemble_result_free(r);
}

/* ---- command line ---- */

Test(sde, cli_keys_match_mc)
{
    const char *const models[2] = {"global", "ou"};
    for (int mi = 0; mi < 2; mi++) {
        char args[256];
        snprintf(args, sizeof args,
                 "sde --model %s --replicas 40 --time 1 --grid 5 --coords --format json",
                 models[mi]);
        json_t *j = test_amsgd_json(args, 0);
        const char *keys[] = {"command",  "version",  "params",    "t",        "step",
                              "err_mean", "err_sem",  "norm_mean", "norm_sem", "alive",
                              "diverged", "replicas", "h2_mean",   "h2_sem"};
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
            cr_assert_not_null(json_object_get(j, keys[i]), "%s: missing key %s", args, keys[i]);
        cr_assert_str_eq(json_string_value(json_object_get(j, "command")), "sde");
        json_t *par = json_object_get(j, "params");
        const char *pkeys[] = {"dim",  "spectrum", "dist",  "eta",     "mu",
                               "init", "seed",     "time",  "grid",    "replicas",
                               "dt",   "model",    "noise", "sampler", "blowup"};
        for (size_t i = 0; i < sizeof pkeys / sizeof *pkeys; i++)
            cr_assert_not_null(json_object_get(par, pkeys[i]), "%s: missing params.%s", args,
                               pkeys[i]);
        cr_assert_str_eq(json_string_value(json_object_get(par, "model")), models[mi]);
        /* --dt defaults to --eta */
        cr_assert_eq(json_number_value(json_object_get(par, "dt")), 5e-4);
        cr_assert_eq(json_array_size(json_object_get(j, "t")), 5);
        cr_assert_eq(json_integer_value(json_array_get(json_object_get(j, "step"), 4)), 2000);
        cr_assert_eq(json_integer_value(json_object_get(j, "replicas")), 40);
        json_decref(j);
    }
    test_run r = test_amsgd("sde --replicas 10 --time 1 --grid 3");
    cr_assert_eq(r.status, 0);
    cr_assert(strncmp(r.out, "t,step,err_mean,err_sem,norm_mean,norm_sem,alive\n", 49) == 0,
              "CSV header: %.80s", r.out);
    test_run_free(&r);
}

/* Noise-free global SDE with dt = eta and mu = 0 is the expected-data recursion of mc
 * (Euler for the ODE is that recursion): the two agree to rounding. */
Test(sde, cli_noise_free_equals_mc_expected)
{
    json_t *s = test_amsgd_json(
        "sde --no-noise --replicas 1 --eta 0.01 --time 3 --grid 7 --format json", 0);
    json_t *m = test_amsgd_json("mc --dist expected --replicas 1 --eta 0.01 --time 3 --grid 7 "
                                "--format json",
                                0);
    const char *cols[2] = {"err_mean", "norm_mean"};
    for (int c = 0; c < 2; c++) {
        json_t *a = json_object_get(s, cols[c]), *b = json_object_get(m, cols[c]);
        cr_assert_eq(json_array_size(a), 7);
        for (size_t g = 0; g < 7; g++) {
            double x = json_number_value(json_array_get(a, g)),
                   y = json_number_value(json_array_get(b, g));
            cr_assert(fabs(x - y) <= 1e-12 * fabs(y) + 1e-15, "%s[%zu]: sde %.17g, mc %.17g",
                      cols[c], g, x, y);
        }
    }
    cr_assert(json_is_false(json_object_get(json_object_get(s, "params"), "noise")));
    json_decref(s);
    json_decref(m);
}

/* The SDE starts where the chain starts: same v_0 per replica (random-each), same err and
 * |V| at t = 0, also with a rotated eigenbasis (the SDE works in h = Q^T V). */
Test(sde, cli_same_initial_points_as_mc)
{
    const char *common = "--init random-each --rotate 5 --dim 6 --replicas 50 --time 1 "
                         "--grid 2 --coords --format json";
    char a1[256], a2[256];
    snprintf(a1, sizeof a1, "sde %s", common);
    snprintf(a2, sizeof a2, "mc %s", common);
    json_t *s = test_amsgd_json(a1, 0), *m = test_amsgd_json(a2, 0);
    const char *cols[2] = {"err_mean", "norm_mean"};
    for (int c = 0; c < 2; c++) {
        double x = json_number_value(json_array_get(json_object_get(s, cols[c]), 0));
        double y = json_number_value(json_array_get(json_object_get(m, cols[c]), 0));
        cr_assert(fabs(x - y) <= 1e-12 * fabs(y), "%s at t=0: sde %.17g, mc %.17g", cols[c], x, y);
    }
    for (size_t i = 0; i < 6; i++) {
        double x =
            json_number_value(json_array_get(json_array_get(json_object_get(s, "h2_mean"), i), 0));
        double y =
            json_number_value(json_array_get(json_array_get(json_object_get(m, "h2_mean"), i), 0));
        cr_assert(fabs(x - y) <= 1e-12 * fabs(y) + 1e-15, "h2_%zu at t=0: sde %.17g, mc %.17g",
                  i + 1, x, y);
    }
    json_decref(s);
    json_decref(m);
}

Test(sde, cli_bad_input)
{
    const char *bad[][2] = {
        {"sde --dt 0", "--dt"},
        {"sde --dt nan", "--dt"},
        {"sde --model foo", "--model"},
        {"sde --noise 2", "--noise"},
        {"sde --noise 1 --no-noise", "--no-noise"},
        {"sde --sampler cheap", "--sampler"},
        {"sde --delay const:3", "--delay"},
        {"sde --dist student:3", "--dist"},
        {"sde --mu 1", "--mu"},
        {"sde --time 1e12 --dt 1e-9", "--time"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        test_run r = test_amsgd(bad[i][0]);
        cr_assert_eq(r.status, 2, "amsgd %s: exit %d, stderr %s", bad[i][0], r.status, r.err);
        cr_assert_eq(r.out[0], 0, "amsgd %s wrote to stdout: %.60s", bad[i][0], r.out);
        cr_assert(strncmp(r.err, "amsgd: error: ", 14) == 0 && strstr(r.err, bad[i][1]),
                  "amsgd %s: stderr '%s' should name %s", bad[i][0], r.err, bad[i][1]);
        char *nl = strchr(r.err, '\n');
        cr_assert(nl && nl[1] == 0, "amsgd %s: stderr is not one line: %s", bad[i][0], r.err);
        test_run_free(&r);
    }
    test_run h = test_amsgd("sde --help");
    cr_assert_eq(h.status, 0);
    const char *flags[] = {"--dt",      "--model", "--noise",    "--no-noise",
                           "--sampler", "--eta",   "--replicas", "--threads"};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        cr_assert(strstr(h.out, flags[i]), "--help lacks %s", flags[i]);
    test_run_free(&h);
}
