/*
 * test_delaycorr.c -- theory/am_delaycorr.h against independent computations: the stationary
 * covariance of the augmented state (x_k, ..., x_{k-N}) of the linear delayed recursion, by
 * doubling of the Lyapunov sum (constant delay) and by fixed-point iteration of
 * S = sum_j p_j A_j S A_j^T + Q (random delay); the slow root against the companion-matrix
 * eigenvalues (gsl_poly_complex_solve) and a long deterministic recursion; the first-order
 * factors against the exact values as the step shrinks; the delay-OU limit against Lambert's W
 * (gsl_sf_lambert_W0) and the Kuechler-Mensch variance.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_poly.h>

#include "../theory/am_delaycorr.h"
#include "../theory/am_problem.h"
#include "../theory/am_theory.h"

/* The augmented matrix A_j of x_{k+1} = (1+mu) x_k - mu x_{k-1} - h x_{k-j} on the state
 * (x_k, ..., x_{k-N+1}), N >= max(j, 1) + 1. */
static void dc_augmented(gsl_matrix *A, double mu, double h, size_t j)
{
    gsl_matrix_set_zero(A);
    size_t N = A->size1;
    *gsl_matrix_ptr(A, 0, 0) += 1 + mu;
    *gsl_matrix_ptr(A, 0, 1) -= mu;
    *gsl_matrix_ptr(A, 0, j) -= h;
    for (size_t r = 1; r < N; r++)
        gsl_matrix_set(A, r, r - 1, 1.0);
}

/* Constant delay T: S = sum_n A^n Q A^nT by doubling (S <- S + A S A^T, A <- A^2), 2^60 terms. */
static void dc_lyapunov_doubling(double mu, double h, double noise, size_t T, gsl_matrix *S)
{
    size_t N = S->size1;
    gsl_matrix *A = gsl_matrix_alloc(N, N), *W = gsl_matrix_alloc(N, N),
               *A2 = gsl_matrix_alloc(N, N);
    dc_augmented(A, mu, h, T);
    gsl_matrix_set_zero(S);
    gsl_matrix_set(S, 0, 0, noise);
    for (int it = 0; it < 60; it++) {
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, A, S, 0.0, W);
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, W, A, 1.0, S);
        gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, A, A, 0.0, A2);
        gsl_matrix_memcpy(A, A2);
    }
    gsl_matrix_free(A);
    gsl_matrix_free(W);
    gsl_matrix_free(A2);
}

/* Random delay: S <- sum_j p_j A_j S A_j^T + Q, iterated iters times from S = Q. */
static void dc_lyapunov_random(double mu, double h, double noise, const double *pmf, size_t n,
                               size_t iters, gsl_matrix *S)
{
    size_t N = S->size1;
    gsl_matrix **A = malloc(n * sizeof *A);
    gsl_matrix *W = gsl_matrix_alloc(N, N), *S2 = gsl_matrix_alloc(N, N);
    for (size_t j = 0; j < n; j++) {
        A[j] = gsl_matrix_alloc(N, N);
        dc_augmented(A[j], mu, h, j);
    }
    gsl_matrix_set_zero(S);
    gsl_matrix_set(S, 0, 0, noise);
    for (size_t it = 0; it < iters; it++) {
        gsl_matrix_set_zero(S2);
        gsl_matrix_set(S2, 0, 0, noise);
        for (size_t j = 0; j < n; j++) {
            gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, A[j], S, 0.0, W);
            gsl_blas_dgemm(CblasNoTrans, CblasTrans, pmf[j], W, A[j], 1.0, S2);
        }
        gsl_matrix_memcpy(S, S2);
    }
    for (size_t j = 0; j < n; j++)
        gsl_matrix_free(A[j]);
    free(A);
    gsl_matrix_free(W);
    gsl_matrix_free(S2);
}

static int dc_close(double a, double b, double tol)
{
    return fabs(a - b) <= tol * fmax(fabs(a), fabs(b));
}

Test(delaycorr, acov_constant_delay_against_lyapunov_doubling)
{
    static const double mus[3] = {0, 0.5, 0.9};
    static const double hs[2] = {0.002, 0.01};
    static const size_t taus[4] = {0, 1, 5, 20};
    for (size_t im = 0; im < 3; im++)
        for (size_t ih = 0; ih < 2; ih++)
            for (size_t it = 0; it < 4; it++) {
                double mu = mus[im], h = hs[ih] * (1 - mu);
                size_t T = taus[it], N = (T > 1 ? T : 1) + 1;
                if (N < 8) N = 8;
                double pmf[21] = {0};
                pmf[T] = 1;
                double g[8];
                cr_assert_eq(am_delaycorr_linear_acov(mu, h, 1.0, pmf, T + 1, 8, g), AM_OK,
                             "mu=%g h=%g tau=%zu", mu, h, T);
                gsl_matrix *S = gsl_matrix_alloc(N, N);
                dc_lyapunov_doubling(mu, h, 1.0, T, S);
                for (size_t m = 0; m < 8; m++)
                    cr_expect(dc_close(g[m], gsl_matrix_get(S, 0, m), 1e-9),
                              "mu=%g h=%g tau=%zu: gamma_%zu %.15g, Lyapunov %.15g", mu, h, T, m,
                              g[m], gsl_matrix_get(S, 0, m));
                gsl_matrix_free(S);
            }
}

Test(delaycorr, acov_random_delay_against_lyapunov_iteration)
{
    /* uniform{0..6} and a skewed law on {0..4}, h large enough for fast convergence */
    double unif[7], skew[5] = {0.1, 0.4, 0.2, 0.0, 0.3};
    for (size_t j = 0; j < 7; j++)
        unif[j] = 1.0 / 7;
    const double *laws[2] = {unif, skew};
    size_t ns[2] = {7, 5};
    static const double mus[2] = {0, 0.7};
    for (size_t il = 0; il < 2; il++)
        for (size_t im = 0; im < 2; im++) {
            double mu = mus[im], h = 0.05 * (1 - mu);
            size_t N = 9;
            double g[9];
            cr_assert_eq(am_delaycorr_linear_acov(mu, h, 2.0, laws[il], ns[il], 9, g), AM_OK);
            gsl_matrix *S = gsl_matrix_alloc(N, N);
            dc_lyapunov_random(mu, h, 2.0, laws[il], ns[il], 20000, S);
            for (size_t m = 0; m < N; m++)
                cr_expect(dc_close(g[m], gsl_matrix_get(S, 0, m), 1e-9),
                          "law %zu mu=%g: gamma_%zu %.15g, iteration %.15g", il, mu, m, g[m],
                          gsl_matrix_get(S, 0, m));
            gsl_matrix_free(S);
        }
    /* no delay: the AR(2) closed form of theory.md section 3 */
    double one = 1, g[2], mu = 0.5, h = 0.01;
    cr_assert_eq(am_delaycorr_linear_acov(mu, h, 1.0, &one, 1, 2, g), AM_OK);
    double want = (1 + mu) / ((1 - mu) * h * (2 * (1 + mu) - h));
    cr_expect(dc_close(g[0], want, 1e-12), "AR(2) variance %.15g want %.15g", g[0], want);
}

/* As the step shrinks at a fixed small x, the exact discrete factor tends to the delay-OU value
 * (1 + sin x)/cos x, whose first-order term is 1 + x; only the mean delay matters at order x. */
Test(delaycorr, first_order_and_delay_ou_limit)
{
    static const double mus[2] = {0, 0.9};
    for (size_t im = 0; im < 2; im++) {
        double mu = mus[im];
        for (int k = 0; k < 3; k++) {
            double x = 0.05 * (k + 1), h = 4e-4 * (1 - mu);
            size_t T = (size_t)floor(x * (1 - mu) / h + 0.5);
            double xr = (double)T * h / (1 - mu);
            double *pmf = calloc(2 * T + 1, sizeof *pmf), one = 1, g0[2], g[2];
            pmf[T] = 1;
            cr_assert_eq(am_delaycorr_linear_acov(mu, h, 1.0, &one, 1, 2, g0), AM_OK);
            cr_assert_eq(am_delaycorr_linear_acov(mu, h, 1.0, pmf, T + 1, 2, g), AM_OK);
            double ratio = g[0] / g0[0], km = am_delaycorr_dde_variance_factor(xr);
            double hx = xr * h / ((1 - mu) * (1 - mu)); /* the discrete O(x h/(1-mu)^2) term */
            cr_expect(fabs(ratio - km) < 2 * hx + 1e-6,
                      "mu=%g x=%g: discrete factor %.8g, delay-OU %.8g", mu, xr, ratio, km);
            cr_expect(fabs(ratio - (1 + xr)) < xr * xr,
                      "mu=%g x=%g: discrete factor %.8g, first order %.8g (second order x^2/2)", mu,
                      xr, ratio, 1 + xr);
            /* uniform{0..2T}: the same mean, the same first-order factor */
            for (size_t j = 0; j <= 2 * T; j++)
                pmf[j] = 1.0 / (double)(2 * T + 1);
            cr_assert_eq(am_delaycorr_linear_acov(mu, h, 1.0, pmf, 2 * T + 1, 2, g), AM_OK);
            double ru = g[0] / g0[0];
            cr_expect(fabs(ru - (1 + xr)) < xr * xr, "uniform law, mu=%g x=%g: %.8g vs %.8g", mu,
                      xr, ru, 1 + xr);
            /* the relaxation: slow root against the delay-OU rate */
            double z0, z;
            cr_assert_eq(am_delaycorr_linear_root(mu, h, &one, 1, &z0), AM_OK);
            cr_assert_eq(am_delaycorr_linear_root(mu, h, pmf, 2 * T + 1, &z), AM_OK);
            for (size_t j = 0; j <= 2 * T; j++)
                pmf[j] = j == T;
            double zc;
            cr_assert_eq(am_delaycorr_linear_root(mu, h, pmf, T + 1, &zc), AM_OK);
            double rate = log(zc) / log(z0), w = am_delaycorr_dde_rate_factor(xr);
            cr_expect(fabs(rate - w) < 4 * hx + 1e-6,
                      "mu=%g x=%g: discrete rate factor %.8g, delay-OU %.8g", mu, xr, rate, w);
            cr_expect(fabs(log(z0) / log(zc) - (1 - xr)) < 1.5 * xr * xr,
                      "mu=%g x=%g: relaxation factor %.8g, first order %.8g", mu, xr,
                      log(z0) / log(zc), 1 - xr);
            cr_expect(fabs(log(z0) / log(z) - (1 - xr)) < 1.5 * xr * xr,
                      "uniform law mu=%g x=%g: relaxation factor %.8g, first order %.8g", mu, xr,
                      log(z0) / log(z), 1 - xr);
            free(pmf);
        }
    }
}

/* The discrete factor approaches the delay-OU value at order 1 in the step: halving h at a
 * fixed x = tau h/(1-mu) halves the gap (mu = 0.9, x = 0.1). */
Test(delaycorr, discrete_factor_converges_at_order_one)
{
    double mu = 0.9, x = 0.1, d[2];
    for (int l = 0; l < 2; l++) {
        double h = 4e-4 * (1 - mu) / (double)(1 + l);
        size_t T = (size_t)floor(x * (1 - mu) / h + 0.5);
        double *pmf = calloc(T + 1, sizeof *pmf), one = 1, g0[2], g[2];
        pmf[T] = 1;
        cr_assert_eq(am_delaycorr_linear_acov(mu, h, 1.0, &one, 1, 2, g0), AM_OK);
        cr_assert_eq(am_delaycorr_linear_acov(mu, h, 1.0, pmf, T + 1, 2, g), AM_OK);
        d[l] = g[0] / g0[0] - am_delaycorr_dde_variance_factor((double)T * h / (1 - mu));
        free(pmf);
    }
    cr_expect(d[0] / d[1] > 1.7 && d[0] / d[1] < 2.3, "gaps %.4g, %.4g: ratio %.4g, want 2", d[0],
              d[1], d[0] / d[1]);
}

Test(delaycorr, root_against_companion_matrix_and_recursion)
{
    static const double mus[3] = {0, 0.5, 0.9};
    static const size_t taus[3] = {0, 3, 12};
    for (size_t im = 0; im < 3; im++)
        for (size_t it = 0; it < 3; it++)
            for (int sgn = -1; sgn <= 1; sgn += 2) {
                double mu = mus[im], h = sgn * 0.01 * (1 - mu);
                size_t T = taus[it];
                double pmf[13] = {0};
                pmf[T] = 1;
                double z;
                cr_assert_eq(am_delaycorr_linear_root(mu, h, pmf, T + 1, &z), AM_OK);
                /* polynomial (z-1)(z-mu) z^(T-1) + h = 0 (T >= 1), z^2 - (1+mu-h) z + mu (T = 0) */
                size_t deg = T >= 1 ? T + 1 : 2;
                double c[14] = {0}, roots[28];
                if (T == 0) {
                    c[0] = mu;
                    c[1] = -(1 + mu - h);
                    c[2] = 1;
                } else {
                    c[0] = h;
                    c[T - 1] += mu;
                    c[T] += -(1 + mu);
                    c[T + 1] += 1;
                }
                gsl_poly_complex_workspace *ws = gsl_poly_complex_workspace_alloc(deg + 1);
                cr_assert_eq(gsl_poly_complex_solve(c, deg + 1, ws, roots), 0);
                gsl_poly_complex_workspace_free(ws);
                double best = 0; /* largest real root of modulus < 1 (h > 0) or > 1 (h < 0) */
                double rmax = 0;
                for (size_t r = 0; r < deg; r++) {
                    double re = roots[2 * r], ii = roots[2 * r + 1];
                    rmax = fmax(rmax, hypot(re, ii));
                    if (fabs(ii) > 1e-9) continue;
                    if ((h > 0 && re < 1 && re > best) || (h < 0 && re > 1 && re > best)) best = re;
                }
                cr_expect(fabs(z - best) < 1e-10, "mu=%g h=%g tau=%zu: root %.15g, companion %.15g",
                          mu, h, T, z, best);
                /* the slow real root is the dominant one: a long recursion decays/grows at z */
                cr_expect(fabs(rmax - z) < 1e-10,
                          "mu=%g h=%g tau=%zu: root %.15g, spectral radius %.15g", mu, h, T, z,
                          rmax);
                double x[20000];
                for (size_t k = 0; k < 20000; k++) {
                    if (k < T + 2) {
                        x[k] = 1.0;
                        continue;
                    }
                    x[k] = (1 + mu) * x[k - 1] - mu * x[k - 2] - h * x[k - 1 - T];
                }
                double ratio = x[19999] / x[19998];
                cr_expect(fabs(ratio - z) < 1e-8,
                          "mu=%g h=%g tau=%zu: recursion ratio %.15g root %.15g", mu, h, T, ratio,
                          z);
            }
}

Test(delaycorr, closed_forms_and_bad_input)
{
    static const double lambda[4] = {4, 3, 2, 1};
    am_dist dist = {AM_DIST_RADEMACHER, 0};
    am_problem *p = am_problem_alloc(4, lambda, dist, 0, NULL, NULL, 0);
    cr_assert_not_null(p);
    double eta = 1e-3, mu = 0.5, tm = 40;
    /* stationary error: sum over modes of the OU variance times 1 + tm eta a/(1-mu) */
    double want = 0;
    for (size_t i = 1; i < 4; i++)
        want += eta * lambda[0] * lambda[i] / (2 * (1 - mu) * (lambda[0] - lambda[i])) *
                (1 + tm * eta * (lambda[0] - lambda[i]) / (1 - mu));
    cr_expect(dc_close(am_delaycorr_stationary_error(p, eta, mu, tm), want, 1e-14));
    cr_expect(dc_close(am_delaycorr_stationary_error(p, eta, mu, 0),
                       am_theory_stationary_error(p, eta, mu), 1e-14));
    cr_expect(
        dc_close(am_delaycorr_relaxation_time(p, mu, 3, eta, tm), 0.5 / 3 * (1 - 0.24), 1e-14));
    double unif[5] = {0.2, 0.2, 0.2, 0.2, 0.2};
    cr_expect_eq(am_delaycorr_mean(unif, 5), 2.0);
    double bad[2] = {0.5, 0.6};
    cr_expect(isnan(am_delaycorr_mean(bad, 2)));
    cr_expect(isnan(am_delaycorr_x(1, 0, 0.5, 1)));
    cr_expect(isnan(am_delaycorr_dde_rate_factor(0.5)), "no real slow root beyond 1/e");
    cr_expect(isnan(am_delaycorr_dde_variance_factor(2.0)));
    /* W0(y) e^W0 = y: the growth factor f = W0(y)/y solves f = e^{-f y} */
    double y = 0.3, f = am_delaycorr_dde_growth_factor(y);
    cr_expect(fabs(f - exp(-f * y)) < 1e-14, "growth factor %.15g", f);
    double r = am_delaycorr_dde_rate_factor(0.2); /* rate factor q solves q = e^{q x} */
    cr_expect(fabs(r - exp(r * 0.2)) < 1e-14, "rate factor %.15g", r);
    double g[4], one = 1;
    cr_expect_eq(am_delaycorr_linear_acov(1.0, 0.01, 1, &one, 1, 4, g), AM_EINVAL);
    cr_expect_eq(am_delaycorr_linear_acov(0.5, 0.01, 1, bad, 2, 4, g), AM_EINVAL);
    cr_expect_eq(am_delaycorr_linear_acov(0.5, 0.01, 1, &one, 1, 1, g), AM_EINVAL);
    cr_expect_eq(am_delaycorr_linear_acov(0.5, -0.01, 1, &one, 1, 4, g), AM_EDOM,
                 "an unstable recursion has no stationary law");
    double z;
    cr_expect_eq(am_delaycorr_linear_root(0.5, 0, &one, 1, &z), AM_EINVAL);
    double far[200] = {0};
    far[199] = 1; /* x = 199 * 0.01 / 0.5 > 1/e: the slow mode oscillates */
    cr_expect_eq(am_delaycorr_linear_root(0.5, 0.01, far, 200, &z), AM_EDOM);
    am_problem_free(p);
}
