/*
 * test_dde.c -- the delay-differential limit (solvers/am_dde.h) against closed forms on its
 * first two lag intervals, the ODE as the lag tends to 0, rotation equivariance, the
 * noise-free delayed recursion converging to it at order 1 under inverse scaling, and the
 * bad-argument and divergence contracts. Each closed-form check is also run against a
 * deliberately wrong prediction (the lag off by 1 %), which it must reject.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../core/am_grid.h"
#include "../montecarlo/am_msgd.h"
#include "../solvers/am_dde.h"
#include "../solvers/am_ode.h"
#include "test_util.h"

static const double L4[4] = {4, 3, 2, 1};

/* g(w) = Sigma w - (w . Sigma w) w for a diagonal Sigma = diag(l) */
static void g_diag(const double *l, size_t d, const double *w, double *out)
{
    double q = 0;
    for (size_t i = 0; i < d; i++)
        q += l[i] * w[i] * w[i];
    for (size_t i = 0; i < d; i++)
        out[i] = l[i] * w[i] - q * w[i];
}

/* The exact solution on [0, 2 s] for a diagonal problem: V = v0 + c t g(v0) on [0, s];
 * on [s, 2 s] V(t) = V(s) + c int_s^t g(v0 + c (u - s) g(v0)) du, whose integrand is a cubic
 * polynomial in u, integrated exactly by 3-point Gauss-Legendre. */
static void exact_two_segments(const double *l, size_t d, double c, double s, const double *v0,
                               double t, double *v)
{
    double g0[16], w[16], gw[16];
    g_diag(l, d, v0, g0);
    double t1 = t < s ? t : s;
    for (size_t i = 0; i < d; i++)
        v[i] = v0[i] + c * t1 * g0[i];
    if (t <= s) return;
    const double x[3] = {-sqrt(0.6), 0, sqrt(0.6)}, wt[3] = {5.0 / 9, 8.0 / 9, 5.0 / 9};
    double half = 0.5 * (t - s), mid = 0.5 * (t + s);
    for (int k = 0; k < 3; k++) {
        double u = mid + half * x[k];
        for (size_t i = 0; i < d; i++)
            w[i] = v0[i] + c * (u - s) * g0[i];
        g_diag(l, d, w, gw);
        for (size_t i = 0; i < d; i++)
            v[i] += c * half * wt[k] * gw[i];
    }
}

/* Largest relative state error of the solver on [0, 2 s] against the exact solution built
 * with the lag s_pred (the right prediction when s_pred = s). */
static double two_segment_error(double mu, double s, double s_pred)
{
    am_problem *p = am_problem_alloc(4, L4, (am_dist){AM_DIST_GAUSSIAN, 0}, 0, NULL, NULL, 0);
    am_dde_params par = am_dde_params_default();
    am_status st;
    am_dde *sv = am_dde_alloc(p, &par, &st, NULL, 0);
    cr_assert_not_null(sv, "alloc: %s", am_strerror(st));
    const double v0[4] = {0.5, 0.5, 0.5, 0.5};
    enum { N = 17 };
    double t[N], e[N], nrm[N], vv[N * 4];
    for (int g = 0; g < N; g++)
        t[g] = 2.0 * s * g / (N - 1);
    am_ode_output out = {e, nrm, NULL, vv};
    am_dde_stats stats;
    char err[128] = "";
    cr_assert_eq(am_dde_solve(sv, mu, s, v0, t, N, &out, &stats, err, sizeof err), AM_OK, "%s",
                 err);
    double c = 1 / (1 - mu), worst = 0;
    for (int g = 0; g < N; g++) {
        double ex[4], dmax = 0, emax = 0;
        exact_two_segments(L4, 4, c, s_pred, v0, t[g], ex);
        for (int i = 0; i < 4; i++) {
            dmax = fmax(dmax, fabs(vv[g * 4 + i] - ex[i]));
            emax = fmax(emax, fabs(ex[i]));
        }
        worst = fmax(worst, dmax / emax);
    }
    am_dde_free(sv);
    am_problem_free(p);
    return worst;
}

Test(dde, exact_on_first_two_lag_intervals)
{
    const double mus[3] = {0, 0.5, 0.9}, lags[3] = {0.01, 0.05, 0.2};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double e = two_segment_error(mus[a], lags[b], lags[b]);
            cr_log_info("mu=%g lag=%g: relative error %.3g", mus[a], lags[b], e);
            cr_assert(e < 1e-12,
                      "mu=%g lag=%g: relative state error %.3g on [0, 2 lag] (tol 1e-12)", mus[a],
                      lags[b], e);
        }
}

Test(dde, exact_check_rejects_a_wrong_lag)
{
    /* the same comparison against the solution for a lag 1 % off must fail the tolerance */
    double e = two_segment_error(0.5, 0.05, 0.05 * 1.01);
    cr_assert(e > 1e-6, "a 1 %% wrong lag gave relative error %.3g: the check cannot fail", e);
}

/* sup over the grid of |err_dde(lag) - err_ode| */
static double gap_to_ode(const am_problem *p, double mu, double lag, const double *v0)
{
    enum { G = 21 };
    double t[G], e[G], nrm[G], eo[G], no[G];
    for (int g = 0; g < G; g++)
        t[g] = 4.0 * g / (G - 1);
    am_dde_params dp = am_dde_params_default();
    am_ode_params op = am_ode_params_default();
    op.rtol = 1e-12;
    op.atol = 1e-15;
    am_status st;
    am_dde *sd = am_dde_alloc(p, &dp, &st, NULL, 0);
    am_ode *so = am_ode_alloc(p, &op, &st, NULL, 0);
    am_ode_output od = {e, nrm, NULL, NULL}, oo = {eo, no, NULL, NULL};
    cr_assert_eq(am_dde_solve(sd, mu, lag, v0, t, G, &od, NULL, NULL, 0), AM_OK);
    cr_assert_eq(am_ode_solve(so, mu, v0, t, G, &oo, NULL), AM_OK);
    double gap = 0;
    for (int g = 0; g < G; g++)
        gap = fmax(gap, fabs(e[g] - eo[g]));
    am_dde_free(sd);
    am_ode_free(so);
    return gap;
}

Test(dde, tends_to_the_ode_at_order_one_in_the_lag)
{
    am_problem *p = am_problem_alloc(4, L4, (am_dist){AM_DIST_GAUSSIAN, 0}, 0, NULL, NULL, 0);
    const double v0[4] = {0.2, 0.9, 0.3, 0.24};
    const double lags[3] = {0.02, 0.01, 0.005};
    double gaps[3];
    for (int i = 0; i < 3; i++)
        gaps[i] = gap_to_ode(p, 0.5, lags[i], v0);
    for (int i = 1; i < 3; i++) {
        double slope = log(gaps[i - 1] / gaps[i]) / log(2.0);
        cr_assert(fabs(slope - 1) < 0.05, "lag %g -> %g: gap %.4g -> %.4g, order %.3f (expected 1)",
                  lags[i - 1], lags[i], gaps[i - 1], gaps[i], slope);
        /* the same slope tested against a wrong order 2 must fail */
        cr_assert(fabs(slope - 2) >= 0.05, "order %.3f also passes as 2", slope);
    }
    am_problem_free(p);
}

Test(dde, rotation_equivariant)
{
    am_problem *p = am_problem_alloc(4, L4, (am_dist){AM_DIST_GAUSSIAN, 0}, 0, NULL, NULL, 0);
    am_problem *r = am_problem_alloc(4, L4, (am_dist){AM_DIST_GAUSSIAN, 0}, 7, NULL, NULL, 0);
    const double h0[4] = {0.2, 0.9, 0.3, 0.24};
    double v0[4] = {0};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            v0[i] += r->q[i * 4 + j] * h0[j]; /* V = Q h */
    enum { G = 9 };
    double t[G], e1[G], n1[G], e2[G], n2[G];
    for (int g = 0; g < G; g++)
        t[g] = 0.5 * g;
    am_dde_params dp = am_dde_params_default();
    am_status st;
    am_dde *a = am_dde_alloc(p, &dp, &st, NULL, 0), *b = am_dde_alloc(r, &dp, &st, NULL, 0);
    am_ode_output oa = {e1, n1, NULL, NULL}, ob = {e2, n2, NULL, NULL};
    cr_assert_eq(am_dde_solve(a, 0.3, 0.05, h0, t, G, &oa, NULL, NULL, 0), AM_OK);
    cr_assert_eq(am_dde_solve(b, 0.3, 0.05, v0, t, G, &ob, NULL, NULL, 0), AM_OK);
    for (int g = 0; g < G; g++) {
        cr_assert(fabs(e1[g] - e2[g]) <= 1e-9 * fmax(e1[g], 1e-12) + 1e-14,
                  "t=%g: err %.17g (standard) vs %.17g (rotated)", t[g], e1[g], e2[g]);
        cr_assert(fabs(n1[g] - n2[g]) <= 1e-10 * n1[g], "t=%g: norm %.17g vs %.17g", t[g], n1[g],
                  n2[g]);
    }
    am_dde_free(a), am_dde_free(b);
    am_problem_free(p), am_problem_free(r);
}

/* sup over the grid of |err_mc - err_dde| for noise-free data at step eta with tau = s/eta */
static double recursion_gap(double eta, double mu, double lag, int against_ode)
{
    am_problem *p = am_problem_alloc(4, L4, (am_dist){AM_DIST_EXPECTED, 0}, 0, NULL, NULL, 0);
    am_msgd_params par = am_msgd_params_default();
    par.eta = eta;
    par.mu = mu;
    par.init.kind = AM_INIT_ANGLE;
    par.init.theta = 1.3;
    char spec[64], err[128];
    snprintf(spec, sizeof spec, "const:%.0f", round(lag / eta));
    cr_assert_eq(am_delay_parse(spec, &par.delay, err, sizeof err), AM_OK, "%s", err);
    am_status st;
    am_msgd *m = am_msgd_alloc(p, &par, &st, NULL, 0);
    cr_assert_not_null(m, "tau=%g: %s", lag / eta, am_strerror(st));
    enum { G = 41 };
    am_grid grid = {G, 4.0};
    uint64_t k[G];
    double t[G], e[G], nrm[G], v0[4];
    am_grid_steps(&grid, eta, k);
    am_grid_times(&grid, t);
    am_ensemble_params ep = {1, 1, 0};
    am_ensemble_result *res;
    cr_assert_eq(am_ensemble_run(am_msgd_model(m), k, G, &ep, &res), AM_OK);
    am_msgd_initial(m, 0, v0);
    am_dde_params dp = am_dde_params_default();
    am_dde *sd = am_dde_alloc(p, &dp, &st, NULL, 0);
    am_ode_output od = {e, nrm, NULL, NULL};
    if (against_ode) {
        am_ode_params op = am_ode_params_default();
        am_ode *so = am_ode_alloc(p, &op, &st, NULL, 0);
        cr_assert_eq(am_ode_solve(so, mu, v0, t, G, &od, NULL), AM_OK);
        am_ode_free(so);
    } else {
        cr_assert_eq(am_dde_solve(sd, mu, lag, v0, t, G, &od, NULL, NULL, 0), AM_OK);
    }
    double gap = 0;
    for (size_t g = 0; g < G; g++)
        gap = fmax(gap, fabs(res->obs[g * 2].mean - e[g]));
    am_ensemble_result_free(res);
    am_msgd_free(m);
    am_dde_free(sd);
    am_problem_free(p);
    return gap;
}

Test(dde, delayed_recursion_converges_at_order_one_inverse_scaling)
{
    const double etas[4] = {4e-3, 2e-3, 1e-3, 5e-4};
    const double mus[2] = {0.0, 0.5};
    for (int a = 0; a < 2; a++) {
        double gaps[4], ode[4];
        for (int i = 0; i < 4; i++) {
            gaps[i] = recursion_gap(etas[i], mus[a], 0.04, 0);
            ode[i] = recursion_gap(etas[i], mus[a], 0.04, 1);
        }
        for (int i = 1; i < 4; i++) {
            double slope = log(gaps[i - 1] / gaps[i]) / log(etas[i - 1] / etas[i]);
            cr_assert(fabs(slope - 1.0) < 0.1,
                      "mu=%g lag=0.04: gap %.4g at eta=%g, %.4g at eta=%g, order %.3f (expected 1)",
                      mus[a], gaps[i - 1], etas[i - 1], gaps[i], etas[i], slope);
            /* the same ladder against the undelayed ODE (the wrong limit here) stays finite */
            double slope_ode = log(ode[i - 1] / ode[i]) / log(etas[i - 1] / etas[i]);
            cr_assert(fabs(slope_ode - 1.0) >= 0.1 && ode[i] > 3 * gaps[i],
                      "mu=%g: gap to the ODE %.4g -> %.4g (order %.3f), to the DDE %.4g: the ODE "
                      "is not rejected",
                      mus[a], ode[i - 1], ode[i], slope_ode, gaps[i]);
            cr_log_info("mu=%g eta=%g: gap to DDE %.4g, to ODE %.4g", mus[a], etas[i], gaps[i],
                        ode[i]);
        }
    }
}

Test(dde, divergence_is_a_result)
{
    am_problem *p = am_problem_alloc(4, L4, (am_dist){AM_DIST_GAUSSIAN, 0}, 0, NULL, NULL, 0);
    am_dde_params dp = am_dde_params_default();
    am_status st;
    am_dde *sd = am_dde_alloc(p, &dp, &st, NULL, 0);
    const double v0[4] = {0.5, 0.5, 0.5, 0.5};
    enum { G = 9 };
    double t[G], e[G], nrm[G];
    for (int g = 0; g < G; g++)
        t[g] = g;
    am_ode_output od = {e, nrm, NULL, NULL};
    am_dde_stats stats;
    /* lag 1 with rate 2 lambda_1 / (1 - mu) = 16: far past the linear-stability boundary */
    cr_assert_eq(am_dde_solve(sd, 0.5, 1.0, v0, t, G, &od, &stats, NULL, 0), AM_OK);
    cr_assert(isfinite(stats.diverged_at) && stats.diverged_at < 8, "diverged_at %g",
              stats.diverged_at);
    cr_assert(isnan(e[G - 1]) && isnan(nrm[G - 1]), "after divergence: err %g norm %g", e[G - 1],
              nrm[G - 1]);
    am_dde_free(sd);
    am_problem_free(p);
}

Test(dde, bad_arguments)
{
    am_problem *p = am_problem_alloc(4, L4, (am_dist){AM_DIST_GAUSSIAN, 0}, 0, NULL, NULL, 0);
    am_dde_params dp = am_dde_params_default();
    am_status st;
    am_dde *sd = am_dde_alloc(p, &dp, &st, NULL, 0);
    const double v0[4] = {1, 0, 0, 0}, z[4] = {0};
    double t[2] = {0, 1}, tb[2] = {1, 0.5}, e[2], nrm[2];
    am_ode_output od = {e, nrm, NULL, NULL};
    char err[128];
    cr_assert_eq(am_dde_solve(sd, 0.5, 0, v0, t, 2, &od, NULL, err, sizeof err), AM_EINVAL);
    cr_assert(strstr(err, "lag"), "%s", err);
    cr_assert_eq(am_dde_solve(sd, 1.0, 0.1, v0, t, 2, &od, NULL, err, sizeof err), AM_EINVAL);
    cr_assert_eq(am_dde_solve(sd, 0.5, 0.1, z, t, 2, &od, NULL, err, sizeof err), AM_EINVAL);
    cr_assert_eq(am_dde_solve(sd, 0.5, 0.1, v0, tb, 2, &od, NULL, err, sizeof err), AM_EINVAL);
    cr_assert_eq(am_dde_solve(sd, 0.5, 1e-12, v0, t, 2, &od, NULL, err, sizeof err), AM_EINVAL);
    cr_assert(strstr(err, "segments"), "%s", err);
    dp.rtol = 0;
    cr_assert_null(am_dde_alloc(p, &dp, &st, NULL, 0));
    cr_assert_eq(st, AM_EINVAL);
    am_dde_free(sd);
    am_dde_free(NULL);
    am_problem_free(p);
}

Test(dde, cli_contract)
{
    test_expect_usage_error("dde --time 1", "--lag");
    test_expect_usage_error("dde --lag 0", "--lag");
    test_expect_usage_error("dde --lag -1", "--lag");
    test_expect_usage_error("dde --lag 1e-12 --time 10", "--lag");
    test_run r = test_amsgd("dde --lag 0.05 --mu 0.5 --time 2 --grid 3 --format json");
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    const char *keys[] = {"\"command\"", "\"params\"", "\"t\"",  "\"err\"",
                          "\"norm\"",    "\"solver\"", "\"lag\""};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        cr_assert(strstr(r.out, keys[i]), "key %s missing in %s", keys[i], r.out);
    test_run_free(&r);
}

/* compare --dde: the delay-differential limit as a fourth curve; the noise-free ensemble at a
   fixed lag approaches it (the gap halves with eta) while the gap to the ODE stays */
static void compare_gaps(double eta, double *to_dde, double *to_ode)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "compare --dist expected --replicas 1 --mu 0.5 --eta %g --delay const:%.0f "
             "--init angle:1.3 --time 4 --grid 41 --dde --format json",
             eta, 0.04 / eta);
    test_run r = test_amsgd(cmd);
    cr_assert_eq(r.status, 0, "%s: exit %d (%s)", cmd, r.status, r.err);
    const char *a = strstr(r.out, "\"sup_mc_dde\": "), *b = strstr(r.out, "\"sup_mc_ode\": ");
    cr_assert(a && b, "%s: keys missing", cmd);
    *to_dde = strtod(a + 14, NULL);
    *to_ode = strtod(b + 14, NULL);
    test_run_free(&r);
}

Test(dde, compare_has_the_dde_as_a_fourth_limit)
{
    double d1, o1, d2, o2;
    compare_gaps(2e-3, &d1, &o1);
    compare_gaps(1e-3, &d2, &o2);
    double order = log(d1 / d2) / log(2.0);
    cr_expect(fabs(order - 1) < 0.15, "gap to the DDE %g -> %g: order %.3f", d1, d2, order);
    cr_expect(o2 > 5 * d2 && fabs(log(o1 / o2) / log(2.0)) < 0.3,
              "gap to the ODE %g -> %g should stay (to the DDE %g)", o1, o2, d2);
    test_expect_usage_error("compare --dde --time 1 --grid 3 --replicas 2", "const:TAU");
}
