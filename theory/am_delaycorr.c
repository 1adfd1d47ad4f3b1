/*
 * am_delaycorr.c -- the delay's correction to the local OU moments (am_delaycorr.h,
 * docs/theory.md section 10): the first-order factors 1 + x (variance) and 1 - x (relaxation
 * time), x = tau_mean eta a/(1-mu); the exact constant-lag delay-OU values (Kuechler-Mensch,
 * Lambert's W); and the exact stationary autocovariance of the linear delayed recursion from
 * its Yule-Walker system, with the slow real root of its mean recursion by bisection.
 */
#include "am_delaycorr.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_sf_lambert.h>

#include "am_theory.h"

static int dc_mu_ok(double mu)
{
    return isfinite(mu) && mu >= 0 && mu < 1;
}

static int dc_pmf_ok(const double *pmf, size_t n)
{
    if (!pmf || n == 0) return 0;
    double s = 0;
    for (size_t j = 0; j < n; j++) {
        if (!(pmf[j] >= 0) || !isfinite(pmf[j])) return 0;
        s += pmf[j];
    }
    return fabs(s - 1) <= 1e-9;
}

double am_delaycorr_mean(const double *pmf, size_t n)
{
    if (!dc_pmf_ok(pmf, n)) return NAN;
    double m = 0;
    for (size_t j = 0; j < n; j++)
        m += (double)j * pmf[j];
    return m;
}

double am_delaycorr_x(double a, double eta, double mu, double tau_mean)
{
    if (!(eta > 0) || !dc_mu_ok(mu) || !(tau_mean >= 0) || !isfinite(a)) return NAN;
    return tau_mean * eta * a / (1 - mu);
}

double am_delaycorr_ou_variance(const am_problem *p, double mu, size_t i, double eta,
                                double tau_mean)
{
    if (!p || i == 0 || i >= p->dim) return NAN;
    double x = am_delaycorr_x(p->lambda[0] - p->lambda[i], eta, mu, tau_mean);
    return am_theory_ou_variance(p, mu, i) * (1 + x);
}

double am_delaycorr_stationary_error(const am_problem *p, double eta, double mu, double tau_mean)
{
    if (!p || !(eta > 0) || !dc_mu_ok(mu) || !(tau_mean >= 0)) return NAN;
    double s = 0;
    for (size_t i = 1; i < p->dim; i++)
        s += am_delaycorr_ou_variance(p, mu, i, eta, tau_mean);
    return eta * s; /* E err ~ sum_i Var h_i = eta sum_i Var U_i */
}

double am_delaycorr_relaxation_time(const am_problem *p, double mu, size_t i, double eta,
                                    double tau_mean)
{
    if (!p || i == 0 || i >= p->dim) return NAN;
    double x = am_delaycorr_x(p->lambda[0] - p->lambda[i], eta, mu, tau_mean);
    return am_theory_relaxation_time(p, mu, i) * (1 - x);
}

double am_delaycorr_dde_variance_factor(double x)
{
    if (!(x >= 0 && x < M_PI / 2)) return NAN;
    return (1 + sin(x)) / cos(x);
}

double am_delaycorr_dde_rate_factor(double x)
{
    if (!(x >= 0 && x <= exp(-1.0))) return NAN;
    if (x == 0) return 1.0;
    gsl_sf_result r;
    if (gsl_sf_lambert_W0_e(-x, &r) != GSL_SUCCESS) return NAN;
    return -r.val / x;
}

double am_delaycorr_dde_growth_factor(double y)
{
    if (!(y >= 0) || !isfinite(y)) return NAN;
    if (y == 0) return 1.0;
    gsl_sf_result r;
    if (gsl_sf_lambert_W0_e(y, &r) != GSL_SUCCESS) return NAN;
    return r.val / y;
}

/* ---- the exact linear recursion ---------------------------------------------------------- */

am_status am_delaycorr_linear_acov(double mu, double h, double noise, const double *pmf, size_t n,
                                   size_t nlag, double *gamma)
{
    if (!dc_mu_ok(mu) || !isfinite(h) || !(noise > 0) || !isfinite(noise) || !dc_pmf_ok(pmf, n) ||
        nlag < 2 || !gamma)
        return AM_EINVAL;
    size_t N = n; /* unknowns gamma_0..gamma_N: the recursion reaches back n - 1 + 1 lags */
    size_t dim = N + 1;
    gsl_matrix *M = gsl_matrix_calloc(dim, dim);
    gsl_vector *b = gsl_vector_calloc(dim), *g = gsl_vector_alloc(dim);
    gsl_permutation *perm = gsl_permutation_alloc(dim);
    am_status st = M && b && g && perm ? AM_OK : AM_ENOMEM;
    if (!st) {
        /* E[x_{k+m+1} x_k] = (1+mu) g_m - mu g_{|m-1|} - h sum_j p_j g_{|m-j|}, m = 0..N-1 (the
           noise e_{k+m} and tau_{k+m} are independent of x_k for m >= 0) */
        for (size_t m = 0; m < N; m++) {
            *gsl_matrix_ptr(M, m, m + 1) += 1.0;
            *gsl_matrix_ptr(M, m, m) -= 1 + mu;
            *gsl_matrix_ptr(M, m, m >= 1 ? m - 1 : 1) += mu;
            for (size_t j = 0; j < n; j++)
                *gsl_matrix_ptr(M, m, m >= j ? m - j : j - m) += h * pmf[j];
        }
        /* E[x_{k+1}^2] = ((1+mu)^2 + mu^2 + h^2) g_0 - 2 (1+mu) mu g_1
                        - 2 (1+mu) h sum_j p_j g_j + 2 mu h sum_j p_j g_{|j-1|} + noise = g_0 */
        size_t r = N;
        *gsl_matrix_ptr(M, r, 0) += 1 - ((1 + mu) * (1 + mu) + mu * mu + h * h);
        *gsl_matrix_ptr(M, r, 1) += 2 * (1 + mu) * mu;
        for (size_t j = 0; j < n; j++) {
            *gsl_matrix_ptr(M, r, j) += 2 * (1 + mu) * h * pmf[j];
            *gsl_matrix_ptr(M, r, j >= 1 ? j - 1 : 1) -= 2 * mu * h * pmf[j];
        }
        gsl_vector_set(b, r, noise);
        int sign;
        gsl_error_handler_t *old = gsl_set_error_handler_off();
        if (gsl_linalg_LU_decomp(M, perm, &sign) || gsl_linalg_LU_solve(M, perm, b, g))
            st = AM_EDOM;
        gsl_set_error_handler(old);
    }
    if (!st && !(gsl_vector_get(g, 0) > 0)) st = AM_EDOM;
    if (!st) {
        for (size_t m = 0; m < nlag; m++) {
            if (m <= N) {
                gamma[m] = gsl_vector_get(g, m);
                continue;
            }
            /* gamma_m from the recursion at m - 1 >= N */
            size_t q = m - 1;
            double v = (1 + mu) * gamma[q] - mu * gamma[q - 1];
            for (size_t j = 0; j < n; j++)
                v -= h * pmf[j] * gamma[q >= j ? q - j : j - q];
            gamma[m] = v;
        }
        for (size_t m = 0; m < nlag; m++)
            if (!isfinite(gamma[m])) st = AM_EDOM;
    }
    gsl_permutation_free(perm);
    gsl_vector_free(g);
    gsl_vector_free(b);
    gsl_matrix_free(M);
    return st;
}

/* f(z) = (z-1)(z-mu) + h sum_j p_j z^(1-j), z > 0. */
static double dc_charf(double mu, double h, const double *pmf, size_t n, double z)
{
    double s = 0, zp = z; /* z^(1-j), j = 0, 1, ... */
    for (size_t j = 0; j < n; j++) {
        s += pmf[j] * zp;
        zp /= z;
    }
    return (z - 1) * (z - mu) + h * s;
}

static double dc_bisect(double mu, double h, const double *pmf, size_t n, double lo, double hi)
{
    double flo = dc_charf(mu, h, pmf, n, lo);
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi);
        if (!(mid > lo && mid < hi)) break;
        double fm = dc_charf(mu, h, pmf, n, mid);
        if ((fm > 0) == (flo > 0)) {
            lo = mid;
            flo = fm;
        } else {
            hi = mid;
        }
    }
    return 0.5 * (lo + hi);
}

am_status am_delaycorr_linear_root(double mu, double h, const double *pmf, size_t n, double *z)
{
    if (!dc_mu_ok(mu) || !isfinite(h) || h == 0 || !dc_pmf_ok(pmf, n) || !z) return AM_EINVAL;
    if (h > 0) {
        /* f(1) = h > 0; step down from 1 until f < 0 */
        double r = h / (1 - mu) / 4, prev = 1.0, floor_z = 0.5 * (1 + mu);
        for (;;) {
            double zz = 1 - r;
            if (zz <= floor_z) return AM_EDOM;
            if (dc_charf(mu, h, pmf, n, zz) < 0) {
                *z = dc_bisect(mu, h, pmf, n, zz, prev);
                return AM_OK;
            }
            prev = zz;
            r *= 1.25;
        }
    }
    /* h < 0: f(1) = h < 0 and f grows like z^2: step up from 1 until f > 0 */
    double r = -h / (1 - mu) / 4, prev = 1.0;
    for (int it = 0; it < 4000; it++) {
        double zz = 1 + r;
        if (dc_charf(mu, h, pmf, n, zz) > 0) {
            *z = dc_bisect(mu, h, pmf, n, prev, zz);
            return AM_OK;
        }
        prev = zz;
        r *= 1.25;
    }
    return AM_EDOM;
}
