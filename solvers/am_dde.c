/*
 * am_dde.c -- method of steps for the delay-differential limit of am_dde.h:
 *
 *   V(t) = V(k s) + c int_{k s}^{t} g(V(u - s)) du,   c = 1/(1-mu),   t in [k s, (k+1) s],
 *
 * each segment split into J sub-intervals of length h = s/J carrying V at the
 * Chebyshev-Gauss-Lobatto nodes x_i = -cos(pi i/m), i = 0..m (m = 12). On sub-interval j,
 *
 *   V(node i) = V(start of j) + c (h/2) sum_l Q[i][l] g(V_prev(node l)),
 *   Q[i][l] = int_{-1}^{x_i} L_l(x) dx   (L_l the Lagrange basis of the nodes),
 *
 * where V_prev is the previous segment on the same sub-interval (the history v0 for k = 0).
 * Q is computed once by Gauss-Legendre quadrature with m + 1 points (exact for the degree-m
 * integrand). Saved times are evaluated by barycentric interpolation on their sub-interval.
 */
#include "am_dde.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_integration.h>

enum { DDE_M = 12, DDE_N = DDE_M + 1 };

#define DDE_BLOWUP 1e150
#define DDE_MAX_SUB ((size_t)1 << 16)
#define DDE_MAX_WORK 4e9 /* node evaluations of g over one solve */

struct am_dde {
    const am_problem *p;
    am_dde_params par;
    size_t d;
    double x[DDE_N];        /* nodes on [-1, 1] */
    double bw[DDE_N];       /* barycentric weights */
    double q[DDE_N][DDE_N]; /* integration matrix */
    double *u1;             /* top eigenvector */
    double *y;              /* scratch, d */
};

am_dde_params am_dde_params_default(void)
{
    am_dde_params p;
    p.rtol = 1e-10;
    p.atol = 1e-13;
    p.max_segments = 10000000;
    return p;
}

am_status am_dde_params_check(const am_dde_params *par, char *err, size_t errlen)
{
    if (!par) return am_common_failf(err, errlen, AM_EINVAL, "no parameters");
    if (!(par->rtol >= 1e-14 && par->rtol < 1))
        return am_common_failf(err, errlen, AM_EINVAL, "rtol must be in [1e-14, 1), got %g",
                               par->rtol);
    if (!(par->atol >= 0 && par->atol < 1))
        return am_common_failf(err, errlen, AM_EINVAL, "atol must be in [0, 1), got %g", par->atol);
    if (par->max_segments < 1)
        return am_common_failf(err, errlen, AM_EINVAL, "max_segments must be >= 1");
    return AM_OK;
}

/* Lagrange basis polynomial l of the nodes at x. */
static double lagrange(const double *nodes, int l, double x)
{
    double v = 1;
    for (int k = 0; k < DDE_N; k++)
        if (k != l) v *= (x - nodes[k]) / (nodes[l] - nodes[k]);
    return v;
}

static am_status build_tables(am_dde *s)
{
    for (int i = 0; i < DDE_N; i++)
        s->x[i] = -cos(M_PI * i / DDE_M);
    s->x[0] = -1, s->x[DDE_M] = 1, s->x[DDE_M / 2] = 0;
    for (int i = 0; i < DDE_N; i++)
        s->bw[i] = ((i % 2) ? -1.0 : 1.0) * ((i == 0 || i == DDE_M) ? 0.5 : 1.0);
    gsl_integration_glfixed_table *gl = gsl_integration_glfixed_table_alloc(DDE_N);
    if (!gl) return AM_ENOMEM;
    for (int i = 0; i < DDE_N; i++)
        for (int l = 0; l < DDE_N; l++) {
            double acc = 0;
            for (size_t k = 0; k < DDE_N; k++) {
                double xk, wk;
                gsl_integration_glfixed_point(-1, s->x[i], k, &xk, &wk, gl);
                acc += wk * lagrange(s->x, l, xk);
            }
            s->q[i][l] = i == 0 ? 0.0 : acc;
        }
    gsl_integration_glfixed_table_free(gl);
    return AM_OK;
}

void am_dde_free(am_dde *s)
{
    if (!s) return;
    free(s->u1);
    free(s->y);
    free(s);
}

am_dde *am_dde_alloc(const am_problem *p, const am_dde_params *par, am_status *status, char *err,
                     size_t errlen)
{
    am_status st = AM_EINVAL;
    am_dde *s = NULL;
    if (!p) {
        if (err && errlen) snprintf(err, errlen, "no problem given");
        goto done;
    }
    if (am_dde_params_check(par, err, errlen)) goto done;
    st = AM_ENOMEM;
    s = calloc(1, sizeof *s);
    if (!s) goto done;
    s->p = p;
    s->par = *par;
    s->d = p->dim;
    s->u1 = malloc(s->d * sizeof *s->u1);
    s->y = malloc(s->d * sizeof *s->y);
    if (!s->u1 || !s->y) goto done;
    am_problem_eigvec(p, 0, s->u1);
    st = build_tables(s);
done:
    if (st && s) {
        am_dde_free(s);
        s = NULL;
    }
    if (st == AM_ENOMEM && err && errlen) snprintf(err, errlen, "%s", am_strerror(st));
    if (status) *status = st;
    return s;
}

/* out = g(w) = Sigma w - (w . Sigma w) w (out and w distinct). */
static void g_apply(am_dde *s, const double *w, double *out)
{
    const am_problem *p = s->p;
    size_t d = s->d;
    if (!p->q) {
        for (size_t i = 0; i < d; i++)
            out[i] = p->lambda[i] * w[i];
    } else {
        for (size_t j = 0; j < d; j++)
            s->y[j] = 0;
        for (size_t i = 0; i < d; i++) {
            const double *row = p->q + i * d;
            for (size_t j = 0; j < d; j++)
                s->y[j] += row[j] * w[i];
        }
        for (size_t j = 0; j < d; j++)
            s->y[j] *= p->lambda[j];
        for (size_t i = 0; i < d; i++) {
            const double *row = p->q + i * d;
            double acc = 0;
            for (size_t j = 0; j < d; j++)
                acc += row[j] * s->y[j];
            out[i] = acc;
        }
    }
    double q = 0;
    for (size_t i = 0; i < d; i++)
        q += w[i] * out[i];
    for (size_t i = 0; i < d; i++)
        out[i] -= q * w[i];
}

/* Barycentric interpolation of the node values f (stride d) at x in [-1, 1]. */
static void interp(const am_dde *s, const double *f, double x, double *out)
{
    size_t d = s->d;
    for (int i = 0; i < DDE_N; i++)
        if (x == s->x[i]) {
            memcpy(out, f + (size_t)i * d, d * sizeof *out);
            return;
        }
    double c[DDE_N], den = 0;
    for (int i = 0; i < DDE_N; i++) {
        c[i] = s->bw[i] / (x - s->x[i]);
        den += c[i];
    }
    for (size_t k = 0; k < d; k++) {
        double num = 0;
        for (int i = 0; i < DDE_N; i++)
            num += c[i] * f[(size_t)i * d + k];
        out[k] = num / den;
    }
}

static int finite_bounded(const double *v, size_t d)
{
    double nn = 0;
    for (size_t i = 0; i < d; i++)
        nn += v[i] * v[i];
    return isfinite(nn) && nn <= DDE_BLOWUP * DDE_BLOWUP;
}

/* One solve with J sub-intervals per segment: V at the saved times into vout (n x d, NaN
 * after divergence). */
static am_status solve_once(am_dde *s, double c, double lag, const double *v0, const double *t,
                            size_t n, size_t nseg, size_t J, double *vout, size_t *rhs_evals,
                            double *diverged_at)
{
    size_t d = s->d, block = J * DDE_N * d;
    double *prev = malloc(block * sizeof *prev), *cur = malloc(block * sizeof *cur),
           *gv = malloc(DDE_N * d * sizeof *gv);
    if (!prev || !cur || !gv) {
        free(prev), free(cur), free(gv);
        return AM_ENOMEM;
    }
    for (size_t b = 0; b < J * DDE_N; b++)
        memcpy(prev + b * d, v0, d * sizeof *v0);
    double h = lag / (double)J;
    size_t g = 0;
    *diverged_at = NAN;
    while (g < n && t[g] <= 0) {
        memcpy(vout + g * d, v0, d * sizeof *v0);
        g++;
    }
    const double *start = v0;
    int dead = 0;
    for (size_t k = 0; k < nseg && g < n && !dead; k++) {
        double t0 = (double)k * lag;
        for (size_t j = 0; j < J && !dead; j++) {
            const double *pj = prev + j * DDE_N * d;
            double *cj = cur + j * DDE_N * d;
            for (int l = 0; l < DDE_N; l++)
                g_apply(s, pj + (size_t)l * d, gv + (size_t)l * d);
            *rhs_evals += DDE_N;
            for (int i = 0; i < DDE_N; i++) {
                double *ci = cj + (size_t)i * d;
                for (size_t kk = 0; kk < d; kk++) {
                    double acc = 0;
                    for (int l = 0; l < DDE_N; l++)
                        acc += s->q[i][l] * gv[(size_t)l * d + kk];
                    ci[kk] = start[kk] + c * (0.5 * h) * acc;
                }
                if (!finite_bounded(ci, d)) {
                    dead = 1;
                    *diverged_at = t0 + (double)j * h + 0.5 * h * (s->x[i] + 1);
                    break;
                }
            }
            start = cj + (size_t)DDE_M * d;
        }
        if (dead) break;
        double t1 = (double)(k + 1) * lag;
        for (; g < n && (t[g] <= t1 || k + 1 == nseg); g++) {
            double u = (t[g] - t0) / h;
            size_t j = u < 0 ? 0 : (size_t)u;
            if (j >= J) j = J - 1;
            double x = 2.0 * (t[g] - (t0 + (double)j * h)) / h - 1.0;
            if (x < -1) x = -1;
            if (x > 1) x = 1;
            interp(s, cur + j * DDE_N * d, x, vout + g * d);
        }
        double *tmp = prev;
        prev = cur;
        cur = tmp;
        start = prev + ((J - 1) * DDE_N + DDE_M) * d;
    }
    for (; g < n; g++)
        for (size_t kk = 0; kk < d; kk++)
            vout[g * d + kk] = NAN;
    free(prev), free(cur), free(gv);
    return AM_OK;
}

/* max over saved times of |a - b|_inf / (rtol |b|_inf + atol), over times where both are
 * finite and bounded; INFINITY where exactly one of them is. */
static double discrepancy(const am_dde *s, const double *a, const double *b, size_t n)
{
    size_t d = s->d;
    double worst = 0;
    for (size_t g = 0; g < n; g++) {
        const double *ag = a + g * d, *bg = b + g * d;
        int fa = finite_bounded(ag, d), fb = finite_bounded(bg, d);
        if (!fa && !fb) continue;
        if (fa != fb) return INFINITY;
        double dmax = 0, bmax = 0;
        for (size_t k = 0; k < d; k++) {
            dmax = fmax(dmax, fabs(ag[k] - bg[k]));
            bmax = fmax(bmax, fabs(bg[k]));
        }
        worst = fmax(worst, dmax / (s->par.rtol * bmax + s->par.atol));
    }
    return worst;
}

static void observe(const am_dde *s, const double *v, size_t g, const am_ode_output *out)
{
    const am_problem *p = s->p;
    size_t d = s->d;
    if (!finite_bounded(v, d)) {
        out->err[g] = NAN;
        out->norm[g] = NAN;
        for (size_t i = 0; i < d; i++) {
            if (out->h2) out->h2[g * d + i] = NAN;
            if (out->v) out->v[g * d + i] = NAN;
        }
        return;
    }
    double nn = 0, a = 0;
    for (size_t i = 0; i < d; i++) {
        nn += v[i] * v[i];
        a += s->u1[i] * v[i];
    }
    double r = 0;
    for (size_t i = 0; i < d; i++) {
        double e = v[i] - a * s->u1[i];
        r += e * e;
    }
    out->err[g] = nn > 0 ? r / nn : NAN;
    out->norm[g] = sqrt(nn);
    if (out->v) memcpy(out->v + g * d, v, d * sizeof *v);
    if (out->h2) {
        for (size_t j = 0; j < d; j++) {
            double hj = am_problem_coord(p, v, j);
            out->h2[g * d + j] = hj * hj;
        }
    }
}

am_status am_dde_solve(am_dde *s, double mu, double lag, const double *v0, const double *t,
                       size_t n, const am_ode_output *out, am_dde_stats *stats, char *err,
                       size_t errlen)
{
    if (!s || !v0 || !t || !out || !out->err || !out->norm || n == 0)
        return am_common_failf(err, errlen, AM_EINVAL, "missing argument");
    if (!(mu >= 0 && mu < 1))
        return am_common_failf(err, errlen, AM_EINVAL, "mu must be in [0, 1)");
    if (!(lag > 0) || !isfinite(lag))
        return am_common_failf(err, errlen, AM_EINVAL,
                               "lag must be finite and > 0 (lag 0 is the ODE limit), got %g", lag);
    size_t d = s->d;
    double nv = 0;
    for (size_t i = 0; i < d; i++) {
        if (!isfinite(v0[i])) return am_common_failf(err, errlen, AM_EINVAL, "v0 must be finite");
        nv += v0[i] * v0[i];
    }
    if (!(nv > 0)) return am_common_failf(err, errlen, AM_EINVAL, "v0 must be nonzero");
    for (size_t g = 0; g < n; g++)
        if (!(t[g] >= 0) || !isfinite(t[g]) || (g && t[g] < t[g - 1]))
            return am_common_failf(err, errlen, AM_EINVAL,
                                   "saved times must be finite, >= 0, non-decreasing");
    double nsegd = ceil(t[n - 1] / lag);
    if (nsegd > (double)s->par.max_segments)
        return am_common_failf(err, errlen, AM_EINVAL,
                               "horizon / lag = %.3g segments exceeds the limit %zu", nsegd,
                               s->par.max_segments);
    size_t nseg = (size_t)nsegd;
    double c = 1.0 / (1.0 - mu);
    if ((double)n * (double)d * 16.0 > (double)AM_MEMORY_LIMIT)
        return am_common_failf(err, errlen, AM_ENOMEM, "saved trajectory exceeds the memory limit");
    double *a = malloc(n * d * sizeof *a), *b = malloc(n * d * sizeof *b);
    if (!a || !b) {
        free(a), free(b);
        return am_common_failf(err, errlen, AM_ENOMEM, "out of memory");
    }
    am_dde_stats st = {0};
    st.segments = nseg;
    double div_a = NAN, div_b = NAN;
    size_t J = 1;
    am_status rc = solve_once(s, c, lag, v0, t, n, nseg, J, a, &st.rhs_evals, &div_a);
    double est = INFINITY;
    while (!rc) {
        if (2 * J > DDE_MAX_SUB || (double)nseg * (double)(2 * J) * DDE_N > DDE_MAX_WORK) {
            rc = am_common_failf(
                err, errlen, AM_ESOLVER,
                "tolerance not reached with %zu sub-intervals per lag (estimate %.3g)", J, est);
            break;
        }
        if ((double)(2 * J * DDE_N) * (double)d * 16.0 > (double)AM_MEMORY_LIMIT) {
            rc = am_common_failf(err, errlen, AM_ENOMEM, "subdivision exceeds the memory limit");
            break;
        }
        rc = solve_once(s, c, lag, v0, t, n, nseg, 2 * J, b, &st.rhs_evals, &div_b);
        if (rc) break;
        J *= 2;
        est = discrepancy(s, a, b, n);
        if (est <= 1) break;
        double *tmp = a;
        a = b;
        b = tmp;
        div_a = div_b;
    }
    if (!rc) {
        for (size_t g = 0; g < n; g++)
            observe(s, b + g * d, g, out);
        st.subintervals = J;
        st.error_estimate = est;
        st.diverged_at = div_b;
        if (stats) *stats = st;
    } else if (rc == AM_ENOMEM && err && !err[0]) {
        am_common_failf(err, errlen, AM_ENOMEM, "out of memory");
    }
    free(a), free(b);
    return rc;
}
