/*
 * test_theory.c -- every closed form of theory/am_theory.h and the moments of
 * theory/am_problem.h against an independent computation: GSL quadrature against the
 * densities, exact enumeration, tensor Gauss quadrature, gsl_odeiv2 rk8pd integration of
 * the ODEs, the exact stationary covariance of the discrete linear recursion (Lyapunov sum
 * by doubling), companion-matrix eigenvalues and polynomial roots of the delayed heavy-ball
 * recursion, and brute-force iteration. Plus the `amsgd theory` command-line contract.
 */
#include <criterion/criterion.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_complex_math.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_odeiv2.h>
#include <gsl/gsl_poly.h>
#include <gsl/gsl_randist.h>
#include <jansson.h>

#include "../core/am_rng.h"
#include "../montecarlo/am_data.h"
#include "../theory/am_problem.h"
#include "../theory/am_theory.h"
#include "test_util.h"

static am_problem *mkp(size_t d, const double *l, am_dist_kind kind, double nu, uint64_t rot)
{
    am_dist dist = {kind, nu};
    am_problem *p = am_problem_alloc(d, l, dist, rot, NULL, NULL, 0);
    cr_assert_not_null(p, "am_problem_alloc(d=%zu, kind=%d, nu=%g, rot=%llu)", d, (int)kind, nu,
                       (unsigned long long)rot);
    return p;
}

static int close_rel(double a, double b, double tol)
{
    return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) || a == b;
}

/* ---- moments: quadrature against the densities ------------------------------------------- */

typedef struct {
    int power;
    double lambda, nu;
    am_dist_kind kind;
} moment_ctx;

static double density(const moment_ctx *c, double y)
{
    switch (c->kind) {
    case AM_DIST_GAUSSIAN:
        return gsl_ran_gaussian_pdf(y, sqrt(c->lambda));
    case AM_DIST_STUDENT: {
        double s = sqrt(c->lambda * (c->nu - 2.0) / c->nu);
        return gsl_ran_tdist_pdf(y / s, c->nu) / s;
    }
    default:
        return NAN;
    }
}

static double moment_integrand(double y, void *params)
{
    const moment_ctx *c = params;
    return pow(y, c->power) * density(c, y);
}

/* E[Y^power] by quadrature against the density of the distribution. */
static double quad_moment(am_dist_kind kind, double lambda, double nu, int power)
{
    if (kind == AM_DIST_RADEMACHER) { /* exact enumeration of the two atoms */
        double y = sqrt(lambda);
        return 0.5 * (pow(y, power) + pow(-y, power));
    }
    if (kind == AM_DIST_UNIFORM) { /* uniform on [-b, b], closed interval quadrature */
        double b = sqrt(3.0 * lambda);
        gsl_integration_fixed_workspace *w =
            gsl_integration_fixed_alloc(gsl_integration_fixed_legendre, 8, -b, b, 0, 0);
        const double *x = gsl_integration_fixed_nodes(w), *wt = gsl_integration_fixed_weights(w);
        double s = 0;
        for (size_t k = 0; k < 8; k++)
            s += wt[k] * pow(x[k], power) / (2.0 * b);
        gsl_integration_fixed_free(w);
        return s;
    }
    moment_ctx c = {power, lambda, nu, kind};
    gsl_function f = {moment_integrand, &c};
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(2000);
    double r, err;
    gsl_set_error_handler_off();
    int st = gsl_integration_qagi(&f, 1e-13, 1e-11, 2000, w, &r, &err);
    gsl_integration_workspace_free(w);
    cr_assert_eq(st, 0, "qagi failed (kind %d, lambda %g, nu %g, power %d): %s", (int)kind, lambda,
                 nu, power, gsl_strerror(st));
    return r;
}

Test(theory_moments, m4_and_variance_by_quadrature)
{
    const double lam[] = {4, 2.5, 1, 0.3};
    struct {
        am_dist_kind kind;
        double nu;
    } cases[] = {{AM_DIST_GAUSSIAN, 0}, {AM_DIST_RADEMACHER, 0}, {AM_DIST_UNIFORM, 0},
                 {AM_DIST_STUDENT, 5},  {AM_DIST_STUDENT, 7},    {AM_DIST_STUDENT, 10},
                 {AM_DIST_STUDENT, 30}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        am_problem *p = mkp(4, lam, cases[c].kind, cases[c].nu, 0);
        for (size_t i = 0; i < 4; i++) {
            am_status st;
            double m4 = am_problem_m4(p, i, &st);
            double q4 = quad_moment(cases[c].kind, lam[i], cases[c].nu, 4);
            double q2 = quad_moment(cases[c].kind, lam[i], cases[c].nu, 2);
            cr_expect_eq(st, AM_OK);
            cr_expect(close_rel(m4, q4, 1e-8),
                      "m4 kind %d nu %g lambda %g: formula %.15g, quadrature %.15g",
                      (int)cases[c].kind, cases[c].nu, lam[i], m4, q4);
            cr_expect(close_rel(q2, lam[i], 1e-9),
                      "Var Y kind %d nu %g: quadrature %.15g, lambda %g", (int)cases[c].kind,
                      cases[c].nu, q2, lam[i]);
            /* alpha_ij^2 = E[Y_i^2] E[Y_j^2] for independent coordinates */
            for (size_t j = 0; j < 4; j++) {
                if (j == i) continue;
                double q2j = quad_moment(cases[c].kind, lam[j], cases[c].nu, 2);
                double a2 = am_problem_alpha2(p, i, j, &st);
                cr_expect(close_rel(a2, q2 * q2j, 1e-9),
                          "alpha2 kind %d nu %g (%zu,%zu): %.15g vs quadrature %.15g",
                          (int)cases[c].kind, cases[c].nu, i, j, a2, q2 * q2j);
            }
            cr_expect(close_rel(am_problem_alpha2(p, i, i, NULL), m4, 1e-15));
        }
        am_problem_free(p);
    }
}

/* Truncated E[Y^4] over [-L, L] for student:nu by adaptive quadrature. */
static double student_m4_truncated(double nu, double L)
{
    moment_ctx c = {4, 1.0, nu, AM_DIST_STUDENT};
    gsl_function f = {moment_integrand, &c};
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(2000);
    double r, err;
    gsl_integration_qags(&f, -L, L, 1e-12, 1e-10, 2000, w, &r, &err);
    gsl_integration_workspace_free(w);
    return r;
}

Test(theory_moments, student_m4_infinite_for_nu_at_most_4)
{
    const double lam[] = {2, 1};
    const double nus[] = {3, 4};
    for (size_t k = 0; k < 2; k++) {
        am_problem *p = mkp(2, lam, AM_DIST_STUDENT, nus[k], 0);
        am_status st;
        double m4 = am_problem_m4(p, 0, &st);
        cr_expect_eq(st, AM_EDOM, "student:%g m4 status %d", nus[k], (int)st);
        cr_expect(isinf(m4), "student:%g m4 = %g", nus[k], m4);
        double n1 = am_theory_noise_variance(p, 1, 1, &st);
        cr_expect(isinf(n1) && st == AM_EDOM, "student:%g noise variance %g", nus[k], n1);
        /* the truncated fourth moment keeps growing with the cut-off */
        double a = student_m4_truncated(nus[k], 1e2), b = student_m4_truncated(nus[k], 1e5);
        cr_expect(b > a + 1.0, "student:%g truncated m4 %.6g (L=1e2) vs %.6g (L=1e5)", nus[k], a,
                  b);
        /* the off-diagonal alpha is finite */
        cr_expect(close_rel(am_problem_alpha2(p, 0, 1, NULL), 2.0, 1e-15));
        am_problem_free(p);
    }
}

Test(theory_moments, rademacher_cross_moments_by_enumeration)
{
    const double lam[] = {3, 2, 0.5};
    am_problem *p = mkp(3, lam, AM_DIST_RADEMACHER, 0, 0);
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++) {
            double s = 0;
            for (unsigned b = 0; b < 8; b++) {
                double y[3];
                for (size_t k = 0; k < 3; k++)
                    y[k] = (b >> k & 1 ? 1 : -1) * sqrt(lam[k]);
                s += y[i] * y[i] * y[j] * y[j] / 8.0;
            }
            double a = am_problem_alpha2(p, i, j, NULL);
            cr_expect(close_rel(a, s, 1e-14),
                      "rademacher alpha2(%zu,%zu) = %.15g, enumeration %.15g", i, j, a, s);
        }
    am_problem_free(p);
}

/* Sample moments of the data sampler against alpha2 and m4 (statistical, 5 sigma). */
Test(theory_moments, sampler_agrees_with_moments)
{
    const double lam[] = {3, 2, 1};
    struct {
        am_dist_kind kind;
        double nu;
    } cases[] = {{AM_DIST_GAUSSIAN, 0}, {AM_DIST_UNIFORM, 0}, {AM_DIST_STUDENT, 12}};
    const size_t n = 200000;
    for (size_t c = 0; c < 3; c++) {
        am_problem *p = mkp(3, lam, cases[c].kind, cases[c].nu, 0);
        am_rng rng;
        am_rng_init(&rng, 2024, c, AM_STREAM_TEST_FIRST, 0);
        double s[2] = {0, 0}, ss[2] = {0, 0};
        for (size_t k = 0; k < n; k++) {
            double y[3];
            am_data_draw(p, &rng, y);
            double f[2] = {y[0] * y[0] * y[0] * y[0], y[0] * y[0] * y[1] * y[1]};
            for (int q = 0; q < 2; q++) {
                s[q] += f[q];
                ss[q] += f[q] * f[q];
            }
        }
        double want[2] = {am_problem_m4(p, 0, NULL), am_problem_alpha2(p, 0, 1, NULL)};
        for (int q = 0; q < 2; q++) {
            double mean = s[q] / (double)n, var = ss[q] / (double)n - mean * mean;
            double se = sqrt(var / (double)n);
            cr_expect(fabs(mean - want[q]) < 5 * se,
                      "kind %d nu %g %s: sample %.6g +- %.3g, formula %.6g", (int)cases[c].kind,
                      cases[c].nu, q ? "alpha_12^2" : "m4_1", mean, se, want[q]);
        }
        am_problem_free(p);
    }
}

Test(theory_moments, bound_by_enumeration_of_extreme_points)
{
    const double lam[] = {4, 3, 2, 1.5, 1};
    am_dist_kind kinds[] = {AM_DIST_RADEMACHER, AM_DIST_UNIFORM};
    for (int k = 0; k < 2; k++) {
        am_problem *p = mkp(5, lam, kinds[k], 0, 99);
        double scale = kinds[k] == AM_DIST_UNIFORM ? sqrt(3.0) : 1.0, best = 0;
        for (unsigned b = 0; b < 32; b++) { /* sign patterns = vertices of the support box */
            double y[5], x2 = 0;
            for (size_t i = 0; i < 5; i++)
                y[i] = (b >> i & 1 ? 1 : -1) * scale * sqrt(lam[i]);
            for (size_t r = 0; r < 5; r++) { /* X = Q y */
                double xr = 0;
                for (size_t c = 0; c < 5; c++)
                    xr += p->q[r * 5 + c] * y[c];
                x2 += xr * xr;
            }
            best = fmax(best, sqrt(x2));
        }
        cr_expect(close_rel(am_problem_bound(p), best, 1e-12), "kind %d: C_d %.15g, vertices %.15g",
                  (int)kinds[k], am_problem_bound(p), best);
        am_problem_free(p);
    }
    am_problem *g = mkp(5, lam, AM_DIST_GAUSSIAN, 0, 0);
    cr_expect(isinf(am_problem_bound(g)));
    am_problem_free(g);
}

/* ---- SDE covariance against enumeration and tensor Gauss quadrature ---------------------- */

/* Cov[(I - v v^T) X X^T v] from weighted points y (eigen-coordinates), X = Q y. */
static void cov_from_points(const am_problem *p, const double *v, size_t npts, const double *ys,
                            const double *wts, double *cov)
{
    size_t d = p->dim;
    double *mean = calloc(d, sizeof *mean), *m2 = calloc(d * d, sizeof *m2);
    double *x = malloc(d * sizeof *x), *g = malloc(d * sizeof *g);
    for (size_t k = 0; k < npts; k++) {
        const double *y = ys + k * d;
        for (size_t r = 0; r < d; r++) {
            x[r] = 0;
            for (size_t c = 0; c < d; c++)
                x[r] += (p->q ? p->q[r * d + c] : (r == c)) * y[c];
        }
        double xv = 0, vv = 0;
        for (size_t r = 0; r < d; r++) {
            xv += x[r] * v[r];
            vv += v[r] * v[r];
        }
        /* g = (I - v v^T) x (x . v) */
        double vx = xv;
        for (size_t r = 0; r < d; r++)
            g[r] = (x[r] - v[r] * vx) * xv;
        (void)vv;
        for (size_t r = 0; r < d; r++) {
            mean[r] += wts[k] * g[r];
            for (size_t c = 0; c < d; c++)
                m2[r * d + c] += wts[k] * g[r] * g[c];
        }
    }
    for (size_t r = 0; r < d; r++)
        for (size_t c = 0; c < d; c++)
            cov[r * d + c] = m2[r * d + c] - mean[r] * mean[c];
    free(mean);
    free(m2);
    free(x);
    free(g);
}

static void check_cov(const am_problem *p, const double *v, const double *ref, const char *what)
{
    size_t d = p->dim;
    double *c = malloc(d * d * sizeof *c), scale = 0;
    cr_assert_eq(am_theory_sde_covariance(p, v, c), AM_OK);
    for (size_t k = 0; k < d * d; k++)
        scale = fmax(scale, fabs(ref[k]));
    for (size_t k = 0; k < d * d; k++)
        cr_expect(fabs(c[k] - ref[k]) <= 1e-11 * scale,
                  "%s: C[%zu,%zu] formula %.15g, independent %.15g", what, k / d, k % d, c[k],
                  ref[k]);
    free(c);
}

Test(theory_sde, covariance_rademacher_by_enumeration)
{
    const double lam[] = {3, 2, 0.7};
    const double v[] = {0.8, -0.5, 0.45}; /* |v| != 1 on purpose */
    am_problem *p = mkp(3, lam, AM_DIST_RADEMACHER, 0, 7);
    double ys[8 * 3], w[8], ref[9];
    for (unsigned b = 0; b < 8; b++) {
        for (size_t k = 0; k < 3; k++)
            ys[b * 3 + k] = (b >> k & 1 ? 1 : -1) * sqrt(lam[k]);
        w[b] = 1.0 / 8.0;
    }
    cov_from_points(p, v, 8, ys, w, ref);
    check_cov(p, v, ref, "rademacher rotated");
    /* D4 = -2 lambda^2 h^2 < 0 here, yet C stays positive semidefinite */
    double c[9];
    am_theory_sde_covariance(p, v, c);
    gsl_matrix_view m = gsl_matrix_view_array(c, 3, 3);
    gsl_vector *ev = gsl_vector_alloc(3);
    gsl_eigen_symm_workspace *ws = gsl_eigen_symm_alloc(3);
    gsl_eigen_symm(&m.matrix, ev, ws);
    for (size_t k = 0; k < 3; k++)
        cr_expect(gsl_vector_get(ev, k) > -1e-12, "eigenvalue %zu of C = %g", k,
                  gsl_vector_get(ev, k));
    gsl_eigen_symm_free(ws);
    gsl_vector_free(ev);
    am_problem_free(p);
}

/* Tensor Gauss quadrature (exact for the degree-4 polynomials involved). */
static void cov_tensor(const am_problem *p, const double *v, int hermite, double *ref)
{
    const size_t n = 5, d = p->dim;
    gsl_integration_fixed_workspace *w =
        hermite ? gsl_integration_fixed_alloc(gsl_integration_fixed_hermite, n, 0, 0.5, 0, 0)
                : gsl_integration_fixed_alloc(gsl_integration_fixed_legendre, n, -1, 1, 0, 0);
    const double *x = gsl_integration_fixed_nodes(w), *wt = gsl_integration_fixed_weights(w);
    double wsum = 0;
    for (size_t k = 0; k < n; k++)
        wsum += wt[k];
    size_t npts = n * n * n;
    double *ys = malloc(npts * d * sizeof *ys), *wts = malloc(npts * sizeof *wts);
    for (size_t k = 0; k < npts; k++) {
        size_t idx[3] = {k % n, (k / n) % n, k / (n * n)};
        wts[k] = 1;
        for (size_t i = 0; i < 3; i++) {
            double sc = hermite ? sqrt(p->lambda[i]) : sqrt(3.0 * p->lambda[i]);
            ys[k * d + i] = sc * x[idx[i]];
            wts[k] *= wt[idx[i]] / wsum;
        }
    }
    cov_from_points(p, v, npts, ys, wts, ref);
    free(ys);
    free(wts);
    gsl_integration_fixed_free(w);
}

Test(theory_sde, covariance_gaussian_uniform_by_tensor_quadrature)
{
    const double lam[] = {2.5, 1.5, 1};
    const double v[] = {0.3, 0.9, -0.6};
    for (int hermite = 0; hermite < 2; hermite++)
        for (uint64_t rot = 0; rot < 2; rot++) {
            am_problem *p =
                mkp(3, lam, hermite ? AM_DIST_GAUSSIAN : AM_DIST_UNIFORM, 0, rot ? 11 : 0);
            double ref[9];
            cov_tensor(p, v, hermite, ref);
            check_cov(p, v, ref, hermite ? "gaussian" : "uniform");
            am_problem_free(p);
        }
}

Test(theory_sde, covariance_special_cases)
{
    const double lam[] = {2, 1};
    const double v[] = {0.6, 0.8};
    double c[4];
    am_problem *e = mkp(2, lam, AM_DIST_EXPECTED, 0, 0);
    cr_expect_eq(am_theory_sde_covariance(e, v, c), AM_OK);
    for (int k = 0; k < 4; k++)
        cr_expect_eq(c[k], 0.0, "expected data: C[%d] = %g", k, c[k]);
    am_problem_free(e);
    am_problem *s = mkp(2, lam, AM_DIST_STUDENT, 3.5, 0);
    cr_expect_eq(am_theory_sde_covariance(s, v, c), AM_EDOM);
    am_problem_free(s);
    /* at v = e_1 the local OU noise: C_ii = alpha_i1^2 (i >= 2), row/column 1 zero */
    const double l4[] = {4, 3, 2, 1}, e1[] = {1, 0, 0, 0};
    double c4[16];
    am_problem *g = mkp(4, l4, AM_DIST_UNIFORM, 0, 0);
    am_theory_sde_covariance(g, e1, c4);
    for (size_t i = 1; i < 4; i++)
        cr_expect(close_rel(c4[i * 4 + i], am_problem_alpha2(g, i, 0, NULL), 1e-14),
                  "C_%zu%zu = %g vs alpha2 %g", i, i, c4[i * 4 + i],
                  am_problem_alpha2(g, i, 0, NULL));
    for (size_t i = 0; i < 4; i++)
        cr_expect_eq(c4[i], 0.0);
    am_problem_free(g);
}

/* ---- ODE closed form against rk8pd ------------------------------------------------------- */

typedef struct {
    const double *lambda;
    size_t d;
    double mu;
} ode_ctx;

static int oja_rhs(double t, const double y[], double f[], void *params)
{
    (void)t;
    const ode_ctx *c = params;
    double q = 0;
    for (size_t i = 0; i < c->d; i++)
        q += c->lambda[i] * y[i] * y[i];
    for (size_t i = 0; i < c->d; i++)
        f[i] = (c->lambda[i] - q) * y[i] / (1.0 - c->mu);
    return GSL_SUCCESS;
}

static void integrate_oja(const double *lam, size_t d, double mu, const double *h0, double t,
                          double *out)
{
    ode_ctx c = {lam, d, mu};
    gsl_odeiv2_system sys = {oja_rhs, NULL, d, &c};
    gsl_odeiv2_driver *drv =
        gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-4, 1e-14, 1e-14);
    memcpy(out, h0, d * sizeof *out);
    double t0 = 0;
    int st = gsl_odeiv2_driver_apply(drv, &t0, t, out);
    cr_assert_eq(st, GSL_SUCCESS, "rk8pd failed at t=%g", t);
    gsl_odeiv2_driver_free(drv);
}

Test(theory_ode, closed_form_matches_rk8pd)
{
    const double lam[] = {4, 3, 2, 1};
    const double starts[3][4] = {{0.1, 0.7, -0.5, 0.4898979485566356}, /* unit norm */
                                 {0.05, 0.3, 0.2, -0.35},              /* |h0| < 1 */
                                 {0.2, 1.1, -0.9, 0.6}};               /* |h0| > 1 */
    const double mus[] = {0, 0.6}, ts[] = {0.25, 1.5, 4};
    am_problem *p = mkp(4, lam, AM_DIST_GAUSSIAN, 0, 0);
    for (int s = 0; s < 3; s++)
        for (int m = 0; m < 2; m++)
            for (int k = 0; k < 3; k++) {
                double num[4], cf[4];
                integrate_oja(lam, 4, mus[m], starts[s], ts[k], num);
                cr_assert_eq(am_theory_ode_h(p, mus[m], starts[s], ts[k], cf), AM_OK);
                for (int i = 0; i < 4; i++)
                    cr_expect(fabs(cf[i] - num[i]) <= 1e-10 * (1 + fabs(num[i])),
                              "start %d mu %g t %g: H_%d closed %.15g, rk8pd %.15g", s, mus[m],
                              ts[k], i + 1, cf[i], num[i]);
                double err_num =
                    1 - num[0] * num[0] /
                            (num[0] * num[0] + num[1] * num[1] + num[2] * num[2] + num[3] * num[3]);
                double err_cf = am_theory_ode_error(p, mus[m], starts[s], ts[k]);
                cr_expect(fabs(err_cf - err_num) <= 1e-10,
                          "start %d mu %g t %g: err %.15g vs %.15g", s, mus[m], ts[k], err_cf,
                          err_num);
            }
    /* long horizons stay finite and converge to e_1 */
    double h[4];
    cr_assert_eq(am_theory_ode_h(p, 0.9, starts[0], 1e5, h), AM_OK);
    cr_expect(fabs(h[0] - 1) < 1e-15 && h[1] == h[1] && fabs(h[1]) < 1e-300,
              "t=1e5: H = (%g, %g, %g, %g)", h[0], h[1], h[2], h[3]);
    const double zero[4] = {0, 0, 0, 0};
    cr_expect_eq(am_theory_ode_h(p, 0.5, zero, 1, h), AM_EINVAL);
    cr_expect_eq(am_theory_ode_h(p, 1.0, starts[0], 1, h), AM_EINVAL);
    am_problem_free(p);
}

/* ---- OU moments against the exact discrete linear recursion ------------------------------ */

/* Stationary covariance S of s_{k+1} = A s_k + (eta xi, 0), Var xi = noise, for the 2-state
 * heavy-ball recursion x_{k+1} = (1+mu-h) x_k - mu x_{k-1} + eta xi_k: S = sum_n A^n B A^nT,
 * summed by doubling (2^50 terms). */
static void ar2_stationary(double mu, double h, double eta, double noise, double S[4])
{
    double A[4] = {1 + mu - h, -mu, 1, 0};
    S[0] = eta * eta * noise;
    S[1] = S[2] = S[3] = 0;
    for (int it = 0; it < 50; it++) {
        double AS[4], ASA[4], A2[4];
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 2; c++)
                AS[r * 2 + c] = A[r * 2] * S[c] + A[r * 2 + 1] * S[2 + c];
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 2; c++)
                ASA[r * 2 + c] = AS[r * 2] * A[c * 2] + AS[r * 2 + 1] * A[c * 2 + 1];
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 2; c++)
                A2[r * 2 + c] = A[r * 2] * A[c] + A[r * 2 + 1] * A[2 + c];
        for (int k = 0; k < 4; k++) {
            S[k] += ASA[k];
            A[k] = A2[k];
        }
    }
}

/* Lag-n autocovariance [A^n S]_{00} of the same recursion. */
static double ar2_autocov(double mu, double h, const double S[4], long n)
{
    double a = S[0], b = S[2]; /* first column of S: (Var x_k, Cov(x_{k-1}, x_k)) */
    for (long k = 0; k < n; k++) {
        double na = (1 + mu - h) * a - mu * b;
        b = a;
        a = na;
    }
    return a;
}

Test(theory_ou, variance_autocorrelation_and_stationary_error_vs_discrete)
{
    const double lam[] = {4, 3, 2, 1};
    am_dist_kind kinds[] = {AM_DIST_GAUSSIAN, AM_DIST_RADEMACHER};
    const double mus[] = {0, 0.5}, eta = 1e-4;
    for (int k = 0; k < 2; k++)
        for (int m = 0; m < 2; m++) {
            am_problem *p = mkp(4, lam, kinds[k], 0, 0);
            double mu = mus[m], sum = 0, hmax = 0;
            for (size_t i = 1; i < 4; i++) {
                double a = lam[0] - lam[i], h = eta * a, S[4];
                hmax = fmax(hmax, h);
                ar2_stationary(mu, h, eta, lam[0] * lam[i], S);
                sum += S[0];
                /* exact ratio 1/(1 - h/(2(1+mu))): first-order error h/(2(1+mu)) < h */
                double var = am_theory_ou_variance(p, mu, i);
                cr_expect(fabs(S[0] / eta / var - 1) < h,
                          "kind %d mu %g i %zu: discrete Var/eta %.10g, OU %.10g (h %g)",
                          (int)kinds[k], mu, i + 1, S[0] / eta, var, h);
                /* autocorrelation at lag s = relaxation time: O(h/(1-mu)^2) discretisation */
                double relax = am_theory_relaxation_time(p, mu, i);
                long n = lround(relax / eta);
                double rho = ar2_autocov(mu, h, S, n) / S[0];
                double want = am_theory_autocorrelation(p, mu, i, (double)n * eta);
                cr_expect(fabs(rho - want) < 4 * h / ((1 - mu) * (1 - mu)),
                          "kind %d mu %g i %zu: discrete rho(%ld) %.10g, OU %.10g", (int)kinds[k],
                          mu, i + 1, n, rho, want);
                cr_expect(close_rel(am_theory_autocorrelation(p, mu, i, -relax), exp(-1), 1e-15));
                /* relaxation time = -eta / log(slow root of z^2 - (1+mu-h) z + mu) */
                double z0, z1;
                gsl_poly_solve_quadratic(1, -(1 + mu - h), mu, &z0, &z1);
                double slow = -eta / log(fmax(z0, z1));
                cr_expect(fabs(slow / relax - 1) < 2 * h / ((1 - mu) * (1 - mu)),
                          "kind %d mu %g i %zu: discrete relaxation %.10g, OU %.10g", (int)kinds[k],
                          mu, i + 1, slow, relax);
            }
            double se = am_theory_stationary_error(p, eta, mu);
            cr_expect(fabs(sum / se - 1) < hmax,
                      "kind %d mu %g: discrete sum Var %.10g, formula %.10g", (int)kinds[k], mu,
                      sum, se);
            am_problem_free(p);
        }
    const double l2[] = {2, 1};
    am_problem *e = mkp(2, l2, AM_DIST_EXPECTED, 0, 0);
    cr_expect_eq(am_theory_stationary_error(e, 1e-3, 0.5), 0.0);
    cr_expect_eq(am_theory_ou_variance(e, 0.5, 1), 0.0);
    am_problem_free(e);
}

typedef struct {
    double g, sigma2;
} var_ctx;

static int var_rhs(double t, const double y[], double f[], void *params)
{
    (void)t;
    const var_ctx *c = params;
    f[0] = 2 * c->g * y[0] + c->sigma2;
    return GSL_SUCCESS;
}

/* Var U(t) of dU = g U dt + sigma dB from 0 by integrating dP/dt = 2 g P + sigma^2. */
static double integrate_var(double g, double sigma2, double t)
{
    var_ctx c = {g, sigma2};
    gsl_odeiv2_system sys = {var_rhs, NULL, 1, &c};
    gsl_odeiv2_driver *drv =
        gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-4, 1e-15, 1e-14);
    double y = 0, t0 = 0;
    int st = gsl_odeiv2_driver_apply(drv, &t0, t, &y);
    cr_assert_eq(st, GSL_SUCCESS);
    gsl_odeiv2_driver_free(drv);
    return y;
}

Test(theory_ou, saddle_variance_vs_rk8pd)
{
    const double lam[] = {4, 3, 3, 1}; /* lambda_2 = lambda_3 gives g = 0 */
    am_problem *p = mkp(4, lam, AM_DIST_GAUSSIAN, 0, 0);
    const size_t pairs[][2] = {{0, 1}, {3, 1}, {1, 2}, {0, 3}};
    const double mus[] = {0, 0.7}, ts[] = {0.1, 1, 3};
    for (size_t q = 0; q < 4; q++)
        for (int m = 0; m < 2; m++)
            for (int k = 0; k < 3; k++) {
                size_t i = pairs[q][0], j = pairs[q][1];
                double mu = mus[m], g = (lam[i] - lam[j]) / (1 - mu);
                double s2 = lam[i] * lam[j] / ((1 - mu) * (1 - mu));
                double num = integrate_var(g, s2, ts[k]);
                double cf = am_theory_saddle_variance(p, mu, i, j, ts[k]);
                cr_expect(close_rel(cf, num, 1e-10),
                          "i %zu j %zu mu %g t %g: closed %.15g, rk8pd %.15g", i + 1, j + 1, mu,
                          ts[k], cf, num);
            }
    am_problem_free(p);
}

/* ---- phases ------------------------------------------------------------------------------- */

Test(theory_phase, escape_time_reaches_the_confidence)
{
    const double lam[] = {4, 3, 2, 1};
    am_dist_kind kinds[] = {AM_DIST_GAUSSIAN, AM_DIST_RADEMACHER};
    const double mus[] = {0, 0.7}, etas[] = {5e-4, 1e-2}, deltas[] = {0.05, 0.3},
                 nus[] = {0.05, 0.5};
    for (int k = 0; k < 2; k++)
        for (int m = 0; m < 2; m++)
            for (int e = 0; e < 2; e++)
                for (int q = 0; q < 2; q++) {
                    am_problem *p = mkp(4, lam, kinds[k], 0, 0);
                    double mu = mus[m], eta = etas[e], delta = deltas[q], nu = nus[q];
                    am_status st;
                    double T1 = am_theory_escape_time(p, eta, mu, delta, nu, &st);
                    cr_assert_eq(st, AM_OK);
                    /* h_1(T1) = sqrt(eta) U_1(T1) is centred Gaussian; Var from the ODE */
                    double var = eta * integrate_var((lam[0] - lam[1]) / (1 - mu),
                                                     lam[0] * lam[1] / ((1 - mu) * (1 - mu)), T1);
                    double inside = 2 * gsl_cdf_ugaussian_P(delta / sqrt(var)) - 1;
                    cr_expect(fabs(inside - nu) < 1e-8 * nu,
                              "kind %d mu %g eta %g delta %g nu %g: T1 %.10g, P(|h1|<=delta) %.12g",
                              (int)kinds[k], mu, eta, delta, nu, T1, inside);
                    am_problem_free(p);
                }
    const double l2[] = {2, 1};
    am_problem *e = mkp(2, l2, AM_DIST_EXPECTED, 0, 0);
    am_status st;
    cr_expect(isinf(am_theory_escape_time(e, 1e-3, 0, 0.1, 0.05, &st)));
    cr_expect_eq(st, AM_EDOM);
    am_problem_free(e);
    cr_expect(close_rel(2 * gsl_cdf_ugaussian_P(am_theory_z_nu(0.3)) - 1, 0.3, 1e-13));
}

Test(theory_phase, traverse_time_vs_rk8pd)
{
    const double lam[] = {3, 1.2};
    am_problem *p = mkp(2, lam, AM_DIST_GAUSSIAN, 0, 0);
    const double mus[] = {0, 0.8}, deltas[] = {0.01, 0.1, 0.5};
    for (int m = 0; m < 2; m++)
        for (int q = 0; q < 3; q++) {
            double d = deltas[q], T2 = am_theory_traverse_time(p, mus[m], d);
            double h0[2] = {d, sqrt(1 - d * d)}, h[2];
            integrate_oja(lam, 2, mus[m], h0, T2, h);
            cr_expect(fabs(h[0] * h[0] - (1 - d * d)) < 1e-10,
                      "mu %g delta %g: T2 %.10g, h_1^2(T2) %.15g, want %.15g", mus[m], d, T2,
                      h[0] * h[0], 1 - d * d);
        }
    cr_expect(isnan(am_theory_traverse_time(p, 0, 0.75)));
    am_problem_free(p);
}

/* ---- the paper's delay conditions --------------------------------------------------------- */

Test(theory_bounds, paper_delay_conditions)
{
    /* hand values: (1-mu)^2 = 0.25, eta^(1/2) = 0.1, eta^(1/4) = 0.316227766016838 */
    cr_expect(close_rel(am_theory_tau_bound_ode(4, 0.01, 0.5, 0.5, 1), 0.625, 1e-14));
    cr_expect(close_rel(am_theory_tau_bound_ode(4, 0.01, 0.5, 1, 3), 0.1875, 1e-14));
    cr_expect(close_rel(am_theory_tau_bound_local(4, 2, 0.01, 0.5, 0.5, 1), 0.25 / 6, 1e-14));
    cr_expect(close_rel(am_theory_tau_bound_local(4, 2, 0.01, 0.5, 0.25, 1),
                        0.25 / (6 * 0.316227766016838), 1e-14));
    cr_expect_eq(am_theory_tau_bound_local(4, INFINITY, 0.01, 0.5, 0.5, 1), 0.0);
    cr_expect(isnan(am_theory_tau_bound_local(4, 2, 0.01, 0.5, 0.75, 1)));
    cr_expect(isnan(am_theory_tau_bound_ode(4, 0.01, 1.0, 0.5, 1)));
    cr_expect(isnan(am_theory_tau_bound_ode(4, 0.01, 0.5, 0, 1)));
    /* the defining relation tau lambda_1 eta / (1-mu)^2 = C eta^gamma */
    const double etas[] = {1e-5, 1e-3, 0.1}, gammas[] = {0.1, 0.5, 1}, mus[] = {0, 0.9};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 2; c++) {
                double tau = am_theory_tau_bound_ode(2.5, etas[a], mus[c], gammas[b], 1.7);
                double lhs = tau * 2.5 * etas[a] / ((1 - mus[c]) * (1 - mus[c]));
                cr_expect(close_rel(lhs, 1.7 * pow(etas[a], gammas[b]), 1e-13),
                          "eta %g gamma %g mu %g: %g", etas[a], gammas[b], mus[c], lhs);
            }
}

/* ---- linear stability of the delayed heavy-ball recursion --------------------------------- */

/* Spectral radius of the state-space matrix of x_{k+1} = (1+mu) x_k - mu x_{k-1} - h x_{k-tau}
 * with state (x_k, ..., x_{k-n+1}), n = max(tau+1, 2), built from the recursion itself. */
static double companion_radius(double mu, double h, int tau)
{
    size_t n = (size_t)(tau + 1 > 2 ? tau + 1 : 2);
    gsl_matrix *A = gsl_matrix_calloc(n, n);
    gsl_matrix_set(A, 0, 0, 1 + mu);
    gsl_matrix_set(A, 0, 1, -mu);
    gsl_matrix_set(A, 0, (size_t)tau, gsl_matrix_get(A, 0, (size_t)tau) - h);
    for (size_t r = 1; r < n; r++)
        gsl_matrix_set(A, r, r - 1, 1);
    gsl_vector_complex *ev = gsl_vector_complex_alloc(n);
    gsl_eigen_nonsymm_workspace *w = gsl_eigen_nonsymm_alloc(n);
    gsl_eigen_nonsymm_params(0, 1, w); /* balance */
    int st = gsl_eigen_nonsymm(A, ev, w);
    cr_assert_eq(st, 0, "gsl_eigen_nonsymm mu %g h %g tau %d", mu, h, tau);
    double r = 0;
    for (size_t k = 0; k < n; k++)
        r = fmax(r, gsl_complex_abs(gsl_vector_complex_get(ev, k)));
    gsl_eigen_nonsymm_free(w);
    gsl_vector_complex_free(ev);
    gsl_matrix_free(A);
    return r;
}

/* Largest root modulus of z^{tau+1} - (1+mu) z^tau + mu z^{tau-1} + h (tau >= 1), or of
 * z^2 - (1+mu-h) z + mu (tau = 0), by gsl_poly_complex_solve. */
static double poly_radius(double mu, double h, int tau)
{
    size_t n = tau == 0 ? 3 : (size_t)tau + 2;
    double *a = calloc(n, sizeof *a), *z = malloc(2 * (n - 1) * sizeof *z);
    if (tau == 0) {
        a[0] = mu;
        a[1] = -(1 + mu - h);
        a[2] = 1;
    } else {
        a[0] = h;
        a[tau - 1] += mu;
        a[tau] += -(1 + mu);
        a[tau + 1] = 1;
    }
    gsl_poly_complex_workspace *w = gsl_poly_complex_workspace_alloc(n);
    int st = gsl_poly_complex_solve(a, n, w, z);
    cr_assert_eq(st, 0, "gsl_poly_complex_solve mu %g h %g tau %d", mu, h, tau);
    double r = 0;
    for (size_t k = 0; k + 1 < n; k++)
        r = fmax(r, hypot(z[2 * k], z[2 * k + 1]));
    gsl_poly_complex_workspace_free(w);
    free(a);
    free(z);
    return r;
}

Test(theory_stability, critical_delay_vs_roots_and_eigenvalues)
{
    const double mus[] = {0, 0.3, 0.6, 0.9, 0.97};
    const double hs[] = {0.02, 0.05, 0.13, 0.4, 1.1, 2.5, 3.5};
    size_t compared = 0;
    for (size_t m = 0; m < 5; m++)
        for (size_t k = 0; k < 7; k++) {
            double mu = mus[m], h = hs[k], tc;
            cr_assert_eq(am_theory_stability_tau_c(mu, h, &tc), AM_OK);
            for (int tau = 0; tau <= 60; tau++) {
                double rp = poly_radius(mu, h, tau), re = companion_radius(mu, h, tau);
                cr_expect(fabs(rp - re) < 1e-6, "mu %g h %g tau %d: roots %.12g, eigenvalues %.12g",
                          mu, h, tau, rp, re);
                if (fabs(rp - 1) < 1e-7) continue; /* on the boundary within rounding */
                int stable = am_theory_stability_stable(mu, h, tau);
                cr_expect_eq(stable, rp < 1,
                             "mu %g h %g tau %d: predicted %s (tau_c %g, tau* %.6f), max|z| %.12g",
                             mu, h, tau, stable ? "stable" : "unstable", tc,
                             am_theory_stability_tau_star(mu, h), rp);
                cr_expect_eq(tau < tc, rp < 1, "mu %g h %g tau %d: tau_c %g, max|z| %.12g", mu, h,
                             tau, tc, rp);
                compared++;
            }
        }
    cr_expect(compared > 2000, "only %zu comparisons", compared);
}

Test(theory_stability, larger_delays_vs_roots)
{
    const double cases[][2] = {{0, 0.01}, {0.5, 0.005}, {0.9, 0.0008}, {0.99, 6e-5}};
    for (size_t c = 0; c < 4; c++) {
        double mu = cases[c][0], h = cases[c][1], tc;
        cr_assert_eq(am_theory_stability_tau_c(mu, h, &tc), AM_OK);
        cr_assert(tc > 60 && tc < 400, "mu %g h %g: tau_c %g outside the tested range", mu, h, tc);
        double below = companion_radius(mu, h, (int)tc - 1), at = companion_radius(mu, h, (int)tc);
        cr_expect(below < 1 && at > 1,
                  "mu %g h %g: tau_c %g, radius %.12g at tau_c-1, %.12g at tau_c", mu, h, tc, below,
                  at);
        /* the independent bisection for h_c brackets h */
        cr_expect(am_theory_stability_h_c(mu, tc) <= h && h < am_theory_stability_h_c(mu, tc - 1),
                  "mu %g h %g tau_c %g: h_c(tau_c) %.12g, h_c(tau_c-1) %.12g", mu, h, tc,
                  am_theory_stability_h_c(mu, tc), am_theory_stability_h_c(mu, tc - 1));
    }
}

/* Iterates the recursion from x = 1 (history included) and returns
 * max|x| over the last window / max|x| over the window ending at n/2. */
static double iterate_growth(double mu, double h, int tau, long n)
{
    size_t L = (size_t)tau + 2;
    double *x = malloc(L * sizeof *x);
    for (size_t k = 0; k < L; k++)
        x[k] = 1.0;
    size_t cur = 0; /* x[cur] = x_k, x[(cur + L - j) % L] = x_{k-j} */
    double mid = 0, end = 0;
    for (long k = 0; k < n; k++) {
        double xk = x[cur], xm1 = x[(cur + L - 1) % L], xd = x[(cur + L - (size_t)tau) % L];
        double nx = (1 + mu) * xk - mu * xm1 - h * xd;
        cur = (cur + 1) % L;
        x[cur] = nx;
        if (k >= n / 2 - (long)L && k < n / 2) mid = fmax(mid, fabs(nx));
        if (k >= n - (long)L) end = fmax(end, fabs(nx));
    }
    free(x);
    return end / mid;
}

Test(theory_stability, critical_delay_vs_direct_iteration)
{
    const double cases[][2] = {{0, 0.05}, {0.5, 0.05}, {0.9, 0.004}, {0.3, 0.2}, {0.8, 0.6}};
    for (size_t c = 0; c < 5; c++) {
        double mu = cases[c][0], h = cases[c][1], tc;
        cr_assert_eq(am_theory_stability_tau_c(mu, h, &tc), AM_OK);
        for (int tau = (int)tc - 1; tau <= (int)tc; tau++) {
            if (tau < 0) continue;
            double rho = companion_radius(mu, h, tau);
            double rate = fabs(log(rho));
            cr_assert(rate > 2e-5, "mu %g h %g tau %d: radius %.12g too close to 1 to iterate", mu,
                      h, tau, rho);
            long n = (long)ceil(40.0 / rate);
            double g = iterate_growth(mu, h, tau, n);
            if (tau < tc)
                cr_expect(g < 1e-3, "mu %g h %g tau %d (< tau_c %g): growth %g over %ld steps", mu,
                          h, tau, tc, g, n);
            else
                cr_expect(g > 1e3, "mu %g h %g tau %d (= tau_c %g): growth %g over %ld steps", mu,
                          h, tau, tc, g, n);
        }
    }
}

Test(theory_stability, edge_cases)
{
    double tc;
    /* tau = 0: z^2 - (1+mu-h) z + mu, stable iff 0 < h < 2(1+mu) (Jury) */
    cr_expect_eq(am_theory_stability_tau_c(0.5, 3.0001, &tc), AM_OK);
    cr_expect_eq(tc, 0);
    cr_expect(poly_radius(0.5, 3.0001, 0) > 1);
    cr_expect(am_theory_stability_stable(0.5, 2.9999, 0) && poly_radius(0.5, 2.9999, 0) < 1);
    cr_expect(close_rel(am_theory_stability_h_c(0.5, 0), 3, 1e-15));
    cr_expect_eq(am_theory_stability_tau_c(0.5, 0, &tc), AM_EDOM);
    cr_expect_eq(am_theory_stability_tau_c(0.5, -0.1, &tc), AM_EDOM);
    cr_expect_eq(am_theory_stability_tau_c(1.0, 0.1, &tc), AM_EINVAL);
    cr_expect_eq(am_theory_stability_tau_c(-0.1, 0.1, &tc), AM_EINVAL);
    cr_expect_eq(am_theory_stability_tau_c(0.5, NAN, &tc), AM_EINVAL);
    cr_expect(!am_theory_stability_stable(0.5, 0, 3));
    /* tiny h: huge but finite delays */
    cr_expect_eq(am_theory_stability_tau_c(0.5, 1e-9, &tc), AM_OK);
    cr_expect(tc > 7e8 && tc < 8e8, "h=1e-9: tau_c %g", tc);
    /* tau = 1 with mu = 0.9: z^2 - 1.9 z + 0.9 + h has |z|^2 = 0.9 + h, so h_c(1) = 0.1 */
    cr_expect(close_rel(am_theory_stability_h_c(0.9, 1), 0.1, 1e-12), "h_c(1) %.15g",
              am_theory_stability_h_c(0.9, 1));
    /* h_c strictly decreasing in tau */
    for (int t = 0; t < 300; t++)
        cr_expect(am_theory_stability_h_c(0.7, t + 1) < am_theory_stability_h_c(0.7, t), "tau %d",
                  t);
}

Test(theory_stability, delay_equation_limits)
{
    const double mus[] = {0, 0.5, 0.9};
    for (int m = 0; m < 3; m++) {
        double mu = mus[m];
        /* the gap to the inertial expansion is O(h): it halves with h */
        double h = 1e-3 * (1 - mu) * (1 - mu);
        double d1 = am_theory_stability_tau_star(mu, h) - am_theory_tau_c_asymptotic(mu, h);
        double d2 = am_theory_stability_tau_star(mu, h / 2) - am_theory_tau_c_asymptotic(mu, h / 2);
        cr_expect(fabs(d2 / d1 - 0.5) < 0.01, "mu %g: gaps %.6g (h=%g), %.6g (h/2)", mu, d1, h, d2);
        /* tau* h/(1-mu) -> pi/2 (the first-order delay equation) */
        double hs = 1e-7;
        cr_expect(fabs(am_theory_stability_tau_star(mu, hs) * hs / (1 - mu) - M_PI_2) <
                      (1 + mu) * hs / (1 - mu) / (1 - mu),
                  "mu %g: tau* h/(1-mu) = %.12g", mu,
                  am_theory_stability_tau_star(mu, hs) * hs / (1 - mu));
        cr_expect(close_rel(am_theory_tau_c_dde(mu, 0.01), M_PI * (1 - mu) / 0.02, 1e-15));
    }
}

Test(theory_stability, underdamped_limit_and_exponent_one)
{
    /* (1-mu)^2 << h << 1: tau* = (1-mu)/h (1 + O((1-mu)/sqrt(h) + sqrt(h))) */
    const double hs[] = {1e-4, 1e-6}, eps[] = {1e-5, 1e-8};
    for (int k = 0; k < 2; k++) {
        double h = hs[k], e = eps[k], ts = am_theory_stability_tau_star(1 - e, h);
        double tol = 3 * (e / sqrt(h) + sqrt(h));
        cr_expect(fabs(ts / am_theory_tau_c_underdamped(1 - e, h) - 1) < tol,
                  "h %g 1-mu %g: tau* %.10g, (1-mu)/h %.10g", h, e, ts,
                  am_theory_tau_c_underdamped(1 - e, h));
    }
    /* in both limits tau* is linear in (1-mu): the local exponent d ln(tau*) / d ln(1-mu) stays
     * within [1, 1.3] for every mu (it never approaches 2) */
    const double h = 1e-3;
    for (double lg = -6; lg <= -0.05; lg += 0.05) {
        double e = pow(10, lg), r = 1.0001;
        double s1 = am_theory_stability_tau_star(1 - e * r, h);
        double s0 = am_theory_stability_tau_star(1 - e / r, h);
        double slope = (log(s1) - log(s0)) / (2 * log(r));
        cr_expect(slope > 0.99 && slope < 1.3, "h %g 1-mu %g: local exponent %.4f", h, e, slope);
    }
}

/* The closed-form crossing angle against bisection of the modulus condition, and the
 * overlay curve against single evaluations. */
Test(theory_stability, crossing_angle_and_curve)
{
    const double mus[] = {0, 0.4, 0.95},
                 hs[] = {1e-6, 0.01, 0.5, 1.5}; /* away from the flat maximum 2(1+mu) */
    for (int m = 0; m < 3; m++)
        for (int k = 0; k < 4; k++) {
            double mu = mus[m], h = hs[k], lo = 0, hi = M_PI;
            if (h > 2 * (1 + mu)) continue;
            for (int it = 0; it < 200; it++) { /* |e^{i t} - 1| |e^{i t} - mu| = h */
                double t = 0.5 * (lo + hi);
                double f = hypot(cos(t) - 1, sin(t)) * hypot(cos(t) - mu, sin(t));
                if (f < h)
                    lo = t;
                else
                    hi = t;
            }
            double th = am_theory_stability_theta(mu, h);
            cr_expect(close_rel(th, 0.5 * (lo + hi), 1e-9),
                      "mu %g h %g: theta %.15g, bisection %.15g", mu, h, th, 0.5 * (lo + hi));
        }
    cr_expect(isnan(am_theory_stability_theta(0.5, 3.1)));
    const double lam[] = {4, 3, 2, 1}, mu[] = {0, 0.5, 0.9, 0.99};
    am_problem *p = mkp(4, lam, AM_DIST_GAUSSIAN, 0, 0);
    double curve[4];
    for (size_t mode = 0; mode < 4; mode++) {
        cr_assert_eq(am_theory_tau_c_curve(p, 1e-3, mode, mu, 4, curve), AM_OK);
        for (int k = 0; k < 4; k++) {
            double tc;
            am_theory_stability_tau_c(mu[k], 1e-3 * am_theory_mode_curvature(p, mode), &tc);
            cr_expect_eq(curve[k], tc, "mode %zu mu %g: curve %g, single %g", mode, mu[k], curve[k],
                         tc);
        }
    }
    const double bad = 1.0;
    cr_expect_eq(am_theory_tau_c_curve(p, 1e-3, 0, &bad, 1, curve), AM_EINVAL);
    cr_expect_eq(am_theory_tau_c_curve(p, 1e-3, 4, mu, 1, curve), AM_EINVAL);
    am_problem_free(p);
}

/* Central-difference Jacobian of F(v) = Sigma v - (v^T Sigma v) v at v^1 along each eigenvector. */
Test(theory_stability, mode_curvatures_by_finite_differences)
{
    const double lam[] = {4, 3, 1.5, 1};
    am_problem *p = mkp(4, lam, AM_DIST_EXPECTED, 0, 5);
    double v1[4], e[4], vp[4], vm[4], fp[4], fm[4];
    am_problem_eigvec(p, 0, v1);
    for (size_t m = 0; m < 4; m++) {
        /* mode m: eigenvector m+2 (tangential) or v^1 itself (radial) */
        am_problem_eigvec(p, m + 1 < 4 ? m + 1 : 0, e);
        const double eps = 1e-6;
        for (size_t i = 0; i < 4; i++) {
            vp[i] = v1[i] + eps * e[i];
            vm[i] = v1[i] - eps * e[i];
        }
        double *vs[2] = {vp, vm}, *fs[2] = {fp, fm};
        for (int s = 0; s < 2; s++) {
            double sv[4], q = 0;
            for (size_t r = 0; r < 4; r++) {
                sv[r] = 0;
                for (size_t j = 0; j < 4; j++) {
                    double sig = 0; /* Sigma = Q Lambda Q^T */
                    for (size_t k = 0; k < 4; k++)
                        sig += p->q[r * 4 + k] * lam[k] * p->q[j * 4 + k];
                    sv[r] += sig * vs[s][j];
                }
            }
            for (size_t r = 0; r < 4; r++)
                q += vs[s][r] * sv[r];
            for (size_t r = 0; r < 4; r++)
                fs[s][r] = sv[r] - q * vs[s][r];
        }
        double a = am_theory_mode_curvature(p, m);
        for (size_t i = 0; i < 4; i++) {
            double jac = (fp[i] - fm[i]) / (2 * eps);
            cr_expect(fabs(jac + a * e[i]) < 1e-7, "mode %zu: J e [%zu] = %.12g, -a e = %.12g", m,
                      i, jac, -a * e[i]);
        }
    }
    cr_expect(isnan(am_theory_mode_curvature(p, 4)));
    am_problem_free(p);
}

/* The nonlinear noise-free Async-MSGD recursion near v^1 with a constant delay: stable one
 * step below the radial critical delay, unstable at it (the radial mode is the first to go). */
Test(theory_stability, nonlinear_recursion_switches_at_radial_tau_c)
{
    const double lam[] = {4, 2, 1};
    const double eta = 0.01, mu = 0.3;
    am_problem *p = mkp(3, lam, AM_DIST_EXPECTED, 0, 0);
    double tc_rad, tc_tan;
    cr_assert_eq(am_theory_tau_c_curve(p, eta, 2, &mu, 1, &tc_rad), AM_OK);
    cr_assert_eq(am_theory_tau_c_curve(p, eta, 0, &mu, 1, &tc_tan), AM_OK);
    cr_assert(tc_rad < tc_tan, "radial %g tangential %g", tc_rad, tc_tan);
    for (int tau = (int)tc_rad - 1; tau <= (int)tc_rad; tau++) {
        double rho = companion_radius(mu, eta * 2 * lam[0], tau);
        long n = (long)ceil(40.0 / fabs(log(rho)));
        size_t L = (size_t)tau + 2;
        double(*v)[3] = malloc(L * sizeof *v);
        for (size_t k = 0; k < L; k++) {
            v[k][0] = 1 + 1e-4;
            v[k][1] = 1e-4;
            v[k][2] = -1e-4;
        }
        size_t cur = 0;
        double dev = 0;
        for (long k = 0; k < n && isfinite(dev) && dev < 1; k++) {
            const double *vk = v[cur], *vm1 = v[(cur + L - 1) % L],
                         *w = v[(cur + L - (size_t)tau) % L];
            double q = 0, nv[3];
            for (int i = 0; i < 3; i++)
                q += lam[i] * w[i] * w[i];
            for (int i = 0; i < 3; i++)
                nv[i] = vk[i] + mu * (vk[i] - vm1[i]) + eta * (lam[i] * w[i] - q * w[i]);
            cur = (cur + 1) % L;
            memcpy(v[cur], nv, sizeof nv);
            dev = fabs(sqrt(nv[0] * nv[0] + nv[1] * nv[1] + nv[2] * nv[2]) - 1);
        }
        if (tau < tc_rad)
            cr_expect(dev < 1e-10, "tau %d < tau_c %g: ||v|-1| = %g after %ld steps", tau, tc_rad,
                      dev, n);
        else
            cr_expect(!(dev < 1e-2), "tau %d = tau_c %g: ||v|-1| = %g, expected growth", tau,
                      tc_rad, dev);
        free(v);
    }
    am_problem_free(p);
}

/* ---- command line ------------------------------------------------------------------------- */

Test(theory_cli, json_has_the_keys)
{
    test_run r = test_amsgd("theory --format json");
    cr_assert_eq(r.status, 0, "status %d, stderr: %s", r.status, r.err);
    json_error_t err;
    json_t *root = json_loads(r.out, 0, &err);
    cr_assert_not_null(root, "invalid JSON: %s", err.text);
    const char *keys[] = {"command",
                          "version",
                          "params",
                          "stationary_error",
                          "ou_variance",
                          "relaxation_time",
                          "escape_time",
                          "traverse_time",
                          "tau_bound_ode",
                          "tau_bound_local",
                          "tau_c_linear",
                          "alpha2",
                          "m4",
                          "C_d",
                          "notes"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        cr_expect_not_null(json_object_get(root, keys[k]), "missing key %s", keys[k]);
    cr_expect_str_eq(json_string_value(json_object_get(root, "command")), "theory");
    cr_expect_eq(json_array_size(json_object_get(root, "ou_variance")), 3);
    cr_expect_eq(json_array_size(json_object_get(root, "relaxation_time")), 3);
    cr_expect_eq(json_array_size(json_object_get(root, "tau_c_linear")), 4);
    /* defaults 4,3,2,1 gaussian, eta 5e-4, mu 0: (eta/2)(12/1 + 8/2 + 4/3) by hand */
    double se = json_number_value(json_object_get(root, "stationary_error"));
    cr_expect(close_rel(se, 2.5e-4 * (12 + 4 + 4.0 / 3), 1e-13), "stationary_error %.15g", se);
    cr_expect(json_is_null(json_object_get(root, "tau_bound_local")), "gaussian: C_d infinite");
    cr_expect(json_is_null(json_object_get(root, "C_d")));
    cr_expect(json_array_size(json_object_get(root, "notes")) >= 1);
    json_t *params = json_object_get(root, "params");
    const char *pkeys[] = {"dim",   "spectrum",       "dist",  "eta", "mu",
                           "gamma", "bound_constant", "delta", "nu"};
    for (size_t k = 0; k < sizeof pkeys / sizeof pkeys[0]; k++)
        cr_expect_not_null(json_object_get(params, pkeys[k]), "missing params.%s", pkeys[k]);
    json_decref(root);
    test_run_free(&r);
}

Test(theory_cli, bounded_data_and_infinite_moments)
{
    json_t *root = test_amsgd_json("theory --format json --dist rademacher --mu 0.5 --eta 0.01", 0);
    cr_expect(close_rel(json_number_value(json_object_get(root, "C_d")), sqrt(10.0), 1e-15));
    /* 0.25 / ((4 + sqrt(10)) * 0.01^0) with gamma 1/2 */
    cr_expect(close_rel(json_number_value(json_object_get(root, "tau_bound_local")),
                        0.25 / (4 + sqrt(10.0)), 1e-13));
    json_decref(root);

    root = test_amsgd_json("theory --format json --dist student:3", 0);
    json_t *m4 = json_object_get(root, "m4");
    for (size_t i = 0; i < json_array_size(m4); i++)
        cr_expect(json_is_null(json_array_get(m4, i)), "student:3 m4[%zu] not null", i);
    cr_expect(json_is_number(json_object_get(root, "stationary_error")));
    cr_expect(json_array_size(json_object_get(root, "notes")) >= 2);
    json_decref(root);
}

Test(theory_cli, gamma_above_half_and_large_dim)
{
    json_t *root = test_amsgd_json("theory --format json --dist uniform --gamma 0.8", 0);
    cr_expect(json_is_null(json_object_get(root, "tau_bound_local")));
    cr_expect(json_is_number(json_object_get(root, "tau_bound_ode")));
    json_decref(root);
    root = test_amsgd_json("theory --format json --dim 300", 0);
    cr_expect(json_is_null(json_object_get(root, "alpha2")));
    cr_expect_eq(json_array_size(json_object_get(root, "tau_c_linear")), 300);
    cr_expect_eq(json_array_size(json_object_get(root, "ou_variance")), 299);
    json_decref(root);
}

Test(theory_cli, csv_long_table)
{
    test_run r = test_amsgd("theory --dim 3 --spectrum 3,2,1 --mu 0.5");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_expect(strncmp(r.out, "quantity,index,value\n", 21) == 0, "header: %.40s", r.out);
    cr_expect_not_null(strstr(r.out, "\ntau_c_linear,radial,"));
    cr_expect_not_null(strstr(r.out, "\nou_variance,2,"));
    cr_expect_not_null(strstr(r.out, "\nstationary_error,,"));
    test_run_free(&r);
}

Test(theory_cli, bad_input_exits_2)
{
    const char *bad[] = {"theory --mu 1",     "theory --gamma 0",    "theory --delta 0.8",
                         "theory --nu 1",     "theory --eta -1",     "theory --bound-constant 0",
                         "theory --format x", "theory --dist cauchy"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        test_run r = test_amsgd(bad[k]);
        cr_expect_eq(r.status, 2, "'%s': status %d", bad[k], r.status);
        cr_expect_eq(r.out[0], 0, "'%s': stdout not empty: %s", bad[k], r.out);
        size_t lines = 0;
        for (const char *c = r.err; *c; c++)
            lines += *c == '\n';
        cr_expect(lines == 1 && strncmp(r.err, "amsgd: error: ", 14) == 0, "'%s': stderr '%s'",
                  bad[k], r.err);
        test_run_free(&r);
    }
    test_run r = test_amsgd("theory --help");
    cr_expect_eq(r.status, 0);
    cr_expect_not_null(strstr(r.out, "--gamma G"));
    cr_expect_not_null(strstr(r.out, "[default: 0.5]"));
    test_run_free(&r);
}
