/*
 * am_theory.c -- closed-form predictions of am_theory.h: the ODE solution
 * H_i(t) = H_i(0) e^{lambda_i t'} / sqrt(1 - |H(0)|^2 + sum_j H_j(0)^2 e^{2 lambda_j t'}),
 * OU moments near v^1, saddle variance, phase times, the paper's delay conditions, the
 * SDE covariance P [q Sigma + s s^T + D4] P, and the exact linear-stability boundary of
 * x_{k+1} = (1+mu) x_k - mu x_{k-1} - h x_{k-tau} from the unit-circle crossing
 * |(e^{i th}-1)(e^{i th}-mu)| = h with phase (tau - 1/2) th + arg(e^{i th} - mu) = pi/2.
 */
#include "am_theory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

static int mu_ok(double mu)
{
    return isfinite(mu) && mu >= 0 && mu < 1;
}

/* ---- noise and moments ---------------------------------------------------------------- */

double am_theory_noise_variance(const am_problem *p, size_t i, size_t j, am_status *status)
{
    am_status st = AM_OK;
    double v;
    if (p->dist.kind == AM_DIST_EXPECTED)
        v = 0.0;
    else if (i != j)
        v = am_problem_alpha2(p, i, j, &st);
    else
        v = am_problem_m4(p, i, &st) - p->lambda[i] * p->lambda[i];
    if (status) *status = st;
    return v;
}

am_status am_theory_sde_covariance(const am_problem *p, const double *v, double *c)
{
    if (p->dist.kind == AM_DIST_DATA) return AM_EDOM; /* needs independent coordinates */
    size_t d = p->dim;
    if (d > 1 && d * d * sizeof(double) > AM_MEMORY_LIMIT / 4) return AM_ENOMEM;
    memset(c, 0, d * d * sizeof *c);
    if (p->dist.kind == AM_DIST_EXPECTED) return AM_OK;
    double *h = malloc(d * sizeof *h), *diag = malloc(d * sizeof *diag),
           *mh = malloc(d * sizeof *mh), *ch = p->q ? malloc(d * d * sizeof *ch) : c,
           *tmp = p->q ? malloc(d * d * sizeof *tmp) : NULL;
    am_status st = AM_OK;
    if (!h || !diag || !mh || !ch || (p->q && !tmp)) {
        st = AM_ENOMEM;
        goto done;
    }
    /* h = Q^T v */
    for (size_t i = 0; i < d; i++) {
        if (!p->q) {
            h[i] = v[i];
            continue;
        }
        double acc = 0;
        for (size_t k = 0; k < d; k++)
            acc += p->q[k * d + i] * v[k];
        h[i] = acc;
    }
    /* M = diag(q lambda_i + (m4_i - 3 lambda_i^2) h_i^2) + s s^T, s = Lambda h */
    double q = 0, sh = 0;
    for (size_t i = 0; i < d; i++)
        q += p->lambda[i] * h[i] * h[i];
    sh = q; /* s . h = h^T Lambda h */
    for (size_t i = 0; i < d; i++) {
        am_status s4;
        double m4 = am_problem_m4(p, i, &s4);
        if (s4) {
            st = s4;
            goto done;
        }
        double l = p->lambda[i];
        diag[i] = q * l + (m4 - 3.0 * l * l) * h[i] * h[i];
    }
    /* P M P with P = I - h h^T: M - h (M h)^T - (M h) h^T + (h^T M h) h h^T */
    double hmh = 0;
    for (size_t i = 0; i < d; i++) {
        mh[i] = diag[i] * h[i] + p->lambda[i] * h[i] * sh;
        hmh += h[i] * mh[i];
    }
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < d; j++) {
            double m = (i == j ? diag[i] : 0.0) + p->lambda[i] * h[i] * p->lambda[j] * h[j];
            ch[i * d + j] = m - h[i] * mh[j] - mh[i] * h[j] + hmh * h[i] * h[j];
        }
    if (p->q) { /* C = Q Ch Q^T */
        for (size_t i = 0; i < d; i++)
            for (size_t j = 0; j < d; j++) {
                double acc = 0;
                for (size_t k = 0; k < d; k++)
                    acc += p->q[i * d + k] * ch[k * d + j];
                tmp[i * d + j] = acc;
            }
        for (size_t i = 0; i < d; i++)
            for (size_t j = 0; j < d; j++) {
                double acc = 0;
                for (size_t k = 0; k < d; k++)
                    acc += tmp[i * d + k] * p->q[j * d + k];
                c[i * d + j] = acc;
            }
    }
done:
    free(h);
    free(diag);
    free(mh);
    if (p->q) {
        free(ch);
        free(tmp);
    }
    if (st) memset(c, 0, d * d * sizeof *c);
    return st;
}

/* ---- ODE -------------------------------------------------------------------------------- */

am_status am_theory_ode_h(const am_problem *p, double mu, const double *h0, double t, double *h)
{
    size_t d = p->dim;
    if (!mu_ok(mu) || !(t >= 0) || !isfinite(t)) return AM_EINVAL;
    double tp = t / (1.0 - mu), m = -INFINITY, n0 = 0;
    for (size_t j = 0; j < d; j++) {
        if (!isfinite(h0[j])) return AM_EINVAL;
        n0 += h0[j] * h0[j];
        if (h0[j] != 0 && 2.0 * p->lambda[j] * tp > m) m = 2.0 * p->lambda[j] * tp;
    }
    if (!(n0 > 0)) return AM_EINVAL;
    /* divide numerator and denominator by e^{m/2} to avoid overflow */
    double den = (1.0 - n0) * exp(-m);
    for (size_t j = 0; j < d; j++)
        if (h0[j] != 0) den += h0[j] * h0[j] * exp(2.0 * p->lambda[j] * tp - m);
    double s = 1.0 / sqrt(den);
    for (size_t i = 0; i < d; i++)
        h[i] = h0[i] == 0 ? 0.0 : h0[i] * exp(p->lambda[i] * tp - 0.5 * m) * s;
    return AM_OK;
}

double am_theory_ode_error(const am_problem *p, double mu, const double *h0, double t)
{
    double *h = malloc(p->dim * sizeof *h);
    if (!h) return NAN;
    double e = NAN;
    if (am_theory_ode_h(p, mu, h0, t, h) == AM_OK) {
        /* 1 - h_1^2/|h|^2 = sum_{i>=2} h_i^2 / |h|^2, no cancellation */
        double rest = 0, n = 0;
        for (size_t i = 0; i < p->dim; i++) {
            n += h[i] * h[i];
            if (i) rest += h[i] * h[i];
        }
        e = rest / n;
    }
    free(h);
    return e;
}

/* ---- OU near v^1 --------------------------------------------------------------------------- */

double am_theory_ou_variance(const am_problem *p, double mu, size_t i)
{
    if (!mu_ok(mu) || i == 0 || i >= p->dim) return NAN;
    double a = am_theory_noise_variance(p, i, 0, NULL);
    return a / (2.0 * (1.0 - mu) * (p->lambda[0] - p->lambda[i]));
}

double am_theory_relaxation_time(const am_problem *p, double mu, size_t i)
{
    if (!mu_ok(mu) || i == 0 || i >= p->dim) return NAN;
    return (1.0 - mu) / (p->lambda[0] - p->lambda[i]);
}

double am_theory_autocorrelation(const am_problem *p, double mu, size_t i, double s)
{
    return exp(-fabs(s) / am_theory_relaxation_time(p, mu, i));
}

double am_theory_stationary_error(const am_problem *p, double eta, double mu)
{
    if (!mu_ok(mu) || !(eta > 0)) return NAN;
    double sum = 0;
    for (size_t i = 1; i < p->dim; i++)
        sum += am_theory_noise_variance(p, i, 0, NULL) / (p->lambda[0] - p->lambda[i]);
    return eta / (2.0 * (1.0 - mu)) * sum;
}

double am_theory_saddle_variance(const am_problem *p, double mu, size_t i, size_t j, double t)
{
    if (!mu_ok(mu) || i == j || i >= p->dim || j >= p->dim || !(t >= 0)) return NAN;
    double a = am_theory_noise_variance(p, i, j, NULL),
           g = (p->lambda[i] - p->lambda[j]) / (1 - mu);
    double f = g == 0 ? t : expm1(2.0 * g * t) / (2.0 * g);
    return a * f / ((1.0 - mu) * (1.0 - mu));
}

/* ---- phases -----------------------------------------------------------------------------------
 */

double am_theory_z_nu(double nu)
{
    if (!(nu > 0 && nu < 1)) return NAN;
    return gsl_cdf_ugaussian_Pinv(0.5 * (1.0 + nu));
}

double am_theory_escape_time(const am_problem *p, double eta, double mu, double delta, double nu,
                             am_status *status)
{
    if (status) *status = AM_OK;
    if (!mu_ok(mu) || !(eta > 0) || !(delta > 0 && delta < 1) || !(nu > 0 && nu < 1)) {
        if (status) *status = AM_EINVAL;
        return NAN;
    }
    double a = am_theory_noise_variance(p, 0, 1, NULL);
    if (!(a > 0)) {
        if (status) *status = AM_EDOM;
        return INFINITY;
    }
    double gap = p->lambda[0] - p->lambda[1], z = am_theory_z_nu(nu);
    return (1.0 - mu) / (2.0 * gap) *
           log1p(2.0 * (1.0 - mu) * gap * delta * delta / (eta * a * z * z));
}

double am_theory_traverse_time(const am_problem *p, double mu, double delta)
{
    if (!mu_ok(mu) || !(delta > 0 && delta * delta < 0.5)) return NAN;
    double gap = p->lambda[0] - p->lambda[1], d2 = delta * delta;
    return (1.0 - mu) / gap * log((1.0 - d2) / d2);
}

/* ---- delay conditions ---------------------------------------------------------------------------
 */

double am_theory_tau_bound_ode(double lambda1, double eta, double mu, double gamma, double c)
{
    if (!mu_ok(mu) || !(eta > 0) || !(lambda1 > 0) || !(gamma > 0 && gamma <= 1) || !(c > 0))
        return NAN;
    return c * (1.0 - mu) * (1.0 - mu) / (lambda1 * pow(eta, 1.0 - gamma));
}

double am_theory_tau_bound_local(double lambda1, double cd, double eta, double mu, double gamma,
                                 double c)
{
    if (!mu_ok(mu) || !(eta > 0) || !(lambda1 > 0) || !(gamma > 0 && gamma <= 0.5) || !(c > 0) ||
        !(cd >= 0))
        return NAN;
    if (isinf(cd)) return 0.0;
    return c * (1.0 - mu) * (1.0 - mu) / ((lambda1 + cd) * pow(eta, 0.5 - gamma));
}

/* ---- linear stability
 * ----------------------------------------------------------------------------- */

double am_theory_mode_curvature(const am_problem *p, size_t m)
{
    if (m + 1 < p->dim) return p->lambda[0] - p->lambda[m + 1];
    if (m + 1 == p->dim) return 2.0 * p->lambda[0];
    return NAN;
}

/* |e^{i th} - 1| |e^{i th} - mu| = 2 sin(th/2) sqrt((1-mu)^2 + 4 mu sin^2(th/2)) */
static double crossing_modulus(double mu, double th)
{
    double s = sin(0.5 * th);
    return 2.0 * s * sqrt((1.0 - mu) * (1.0 - mu) + 4.0 * mu * s * s);
}

/* arg(e^{i th} - mu) for th in [0, pi], with cos th - mu = (1-mu) - 2 sin^2(th/2). */
static double crossing_arg(double mu, double th)
{
    double s = sin(0.5 * th);
    return atan2(sin(th), (1.0 - mu) - 2.0 * s * s);
}

double am_theory_stability_theta(double mu, double h)
{
    if (!mu_ok(mu) || !(h > 0) || !(h <= 2.0 * (1.0 + mu))) return NAN;
    /* u = sin^2(th/2) solves 16 mu u^2 + 4 (1-mu)^2 u - h^2 = 0 (stable root form) */
    double b = (1.0 - mu) * (1.0 - mu);
    double u = h * h / (2.0 * (b + sqrt(b * b + 4.0 * mu * h * h)));
    if (u > 1.0) u = 1.0;
    return 2.0 * asin(sqrt(u));
}

double am_theory_stability_tau_star(double mu, double h)
{
    if (!mu_ok(mu) || isnan(h)) return NAN;
    if (!(h > 0)) return 0.0; /* h <= 0: a root at z >= 1, unstable for every tau */
    if (h >= 2.0 * (1.0 + mu)) return 0.0;
    double th = am_theory_stability_theta(mu, h);
    return 0.5 + (M_PI_2 - crossing_arg(mu, th)) / th;
}

am_status am_theory_stability_tau_c(double mu, double h, double *tau_c)
{
    *tau_c = NAN;
    if (!mu_ok(mu) || !isfinite(h)) return AM_EINVAL;
    if (!(h > 0)) {
        *tau_c = 0;
        return AM_EDOM;
    }
    double ts = am_theory_stability_tau_star(mu, h);
    if (!(ts <= 9007199254740992.0)) {
        *tau_c = INFINITY;
        return AM_EDOM;
    }
    *tau_c = ceil(ts);
    return AM_OK;
}

double am_theory_stability_h_c(double mu, double tau)
{
    if (!mu_ok(mu) || !(tau >= 0) || !isfinite(tau)) return NAN;
    if (tau == 0) return 2.0 * (1.0 + mu);
    /* psi(th) = (tau - 1/2) th + arg(e^{i th} - mu) increases from 0 to (tau + 1/2) pi on
     * [0, pi]; bisect psi = pi/2 down to adjacent doubles. */
    double lo = 0, hi = M_PI;
    for (int it = 0; it < 4000; it++) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        if ((tau - 0.5) * mid + crossing_arg(mu, mid) < M_PI_2)
            lo = mid;
        else
            hi = mid;
    }
    return crossing_modulus(mu, 0.5 * (lo + hi));
}

int am_theory_stability_stable(double mu, double h, double tau)
{
    if (!mu_ok(mu) || !(h > 0) || !(tau >= 0)) return 0;
    return tau < am_theory_stability_tau_star(mu, h);
}

double am_theory_tau_c_dde(double mu, double h)
{
    if (!mu_ok(mu) || !(h > 0)) return NAN;
    return M_PI * (1.0 - mu) / (2.0 * h);
}

double am_theory_tau_c_asymptotic(double mu, double h)
{
    if (!mu_ok(mu) || !(h > 0)) return NAN;
    return M_PI * (1.0 - mu) / (2.0 * h) - (1.0 + mu) / (2.0 * (1.0 - mu));
}

double am_theory_tau_c_underdamped(double mu, double h)
{
    if (!mu_ok(mu) || !(h > 0)) return NAN;
    return (1.0 - mu) / h;
}

am_status am_theory_tau_c_curve(const am_problem *p, double eta, size_t m, const double *mu,
                                size_t n, double *tau_c)
{
    if (!(eta > 0) || !isfinite(eta) || m >= p->dim) return AM_EINVAL;
    double a = am_theory_mode_curvature(p, m);
    for (size_t k = 0; k < n; k++) {
        if (!mu_ok(mu[k])) return AM_EINVAL;
        if (am_theory_stability_tau_c(mu[k], eta * a, &tau_c[k]) != AM_OK) tau_c[k] = INFINITY;
    }
    return AM_OK;
}
