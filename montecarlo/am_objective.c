/*
 * am_objective.c -- the objectives of am_objective.h on a data set, their gradients and
 * reference optima (least squares by SVD, logistic regression by Newton's method, the top
 * eigenvector of the covariance by a symmetric eigensolver).
 */
#include "am_objective.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#include "../core/am_rng.h"

const am_objective_entry am_objective_table[] = {
    {"pca", "streaming PCA (Oja direction), loss 1 - (u.w)^2/|w|^2", AM_OBJ_PCA},
    {"lsq", "least squares (1/2n) |A x - y|^2", AM_OBJ_LSQ},
    {"logistic", "logistic regression, labels 0/1", AM_OBJ_LOGISTIC},
};
const size_t am_objective_table_len = sizeof am_objective_table / sizeof am_objective_table[0];

am_status am_objective_parse(const char *name, am_objective_kind *out, char *err, size_t errlen)
{
    for (size_t i = 0; i < am_objective_table_len; i++)
        if (strcmp(name, am_objective_table[i].name) == 0) {
            *out = am_objective_table[i].kind;
            return AM_OK;
        }
    snprintf(err, errlen, "unknown objective '%s' (pca, lsq, logistic)", name);
    return AM_EINVAL;
}

const char *am_objective_name(am_objective_kind kind)
{
    for (size_t i = 0; i < am_objective_table_len; i++)
        if (am_objective_table[i].kind == kind) return am_objective_table[i].name;
    return "?";
}

struct am_objective {
    am_objective_kind kind;
    size_t n, d;
    double *a; /* [n*d] features (centred for pca) */
    double *y; /* [n] */
    double *m; /* [d*d]: A^T A / n (lsq) or covariance S (pca) */
    double *b; /* [d]: A^T y / n (lsq) or top eigenvector u (pca) */
    double c;  /* y.y / n (lsq) */
    double fstar;
};

size_t am_objective_dim(const am_objective *f)
{
    return f->d;
}
size_t am_objective_rows(const am_objective *f)
{
    return f->n;
}

double am_objective_optimum(const am_objective *f)
{
    return f->fstar;
}

void am_objective_free(am_objective *f)
{
    if (!f) return;
    free(f->a);
    free(f->y);
    free(f->m);
    free(f->b);
    free(f);
}

static double dot(size_t d, const double *u, const double *v)
{
    double s = 0;
    for (size_t i = 0; i < d; i++)
        s += u[i] * v[i];
    return s;
}

/* log(1 + e^z) without overflow. */
static double log1pexp(double z)
{
    return z > 0 ? z + log1p(exp(-z)) : log1p(exp(z));
}

static double sigmoid(double z)
{
    if (z >= 0) return 1.0 / (1.0 + exp(-z));
    double e = exp(z);
    return e / (1.0 + e);
}

double am_objective_loss(const am_objective *f, const double *x, double *grad)
{
    size_t d = f->d, n = f->n;
    switch (f->kind) {
    case AM_OBJ_LSQ: {
        double q = 0;
        for (size_t i = 0; i < d; i++) {
            double ax = dot(d, f->m + i * d, x);
            q += x[i] * ax;
            if (grad) grad[i] = ax - f->b[i];
        }
        return 0.5 * q - dot(d, f->b, x) + 0.5 * f->c;
    }
    case AM_OBJ_LOGISTIC: {
        double loss = 0;
        if (grad) memset(grad, 0, d * sizeof *grad);
        for (size_t r = 0; r < n; r++) {
            const double *a = f->a + r * d;
            double z = dot(d, a, x);
            loss += log1pexp(z) - f->y[r] * z;
            if (grad) {
                double e = sigmoid(z) - f->y[r];
                for (size_t i = 0; i < d; i++)
                    grad[i] += e * a[i];
            }
        }
        if (grad)
            for (size_t i = 0; i < d; i++)
                grad[i] /= (double)n;
        return loss / (double)n;
    }
    case AM_OBJ_PCA: {
        double ww = dot(d, x, x), uw = dot(d, f->b, x);
        if (grad) {
            double wsw = 0;
            for (size_t i = 0; i < d; i++) {
                grad[i] = dot(d, f->m + i * d, x);
                wsw += x[i] * grad[i];
            }
            for (size_t i = 0; i < d; i++)
                grad[i] = -(grad[i] - wsw * x[i]);
        }
        return ww > 0 ? 1.0 - uw * uw / ww : NAN;
    }
    }
    return NAN;
}

void am_objective_add_sample_grad(const am_objective *f, const double *x, size_t r, double *g)
{
    size_t d = f->d;
    const double *a = f->a + r * d;
    double z = dot(d, a, x);
    switch (f->kind) {
    case AM_OBJ_LSQ: {
        double e = z - f->y[r];
        for (size_t i = 0; i < d; i++)
            g[i] += e * a[i];
        return;
    }
    case AM_OBJ_LOGISTIC: {
        double e = sigmoid(z) - f->y[r];
        for (size_t i = 0; i < d; i++)
            g[i] += e * a[i];
        return;
    }
    case AM_OBJ_PCA:
        for (size_t i = 0; i < d; i++)
            g[i] -= z * a[i] - z * z * x[i];
        return;
    }
}

void am_objective_start(const am_objective *f, uint64_t seed, uint64_t replica, double *x0)
{
    size_t d = f->d;
    if (f->kind != AM_OBJ_PCA) {
        memset(x0, 0, d * sizeof *x0);
        return;
    }
    am_rng r;
    am_rng_init(&r, seed, replica, AM_STREAM_INIT, 0);
    double nn;
    do {
        for (size_t i = 0; i < d; i++)
            x0[i] = am_rng_gaussian(&r);
        nn = sqrt(dot(d, x0, x0));
    } while (!(nn > 0));
    for (size_t i = 0; i < d; i++)
        x0[i] /= nn;
}

/* F* of least squares: solve M x = b by SVD (pseudo-inverse if M is singular). */
static am_status lsq_optimum(am_objective *f)
{
    size_t d = f->d;
    gsl_matrix *u = gsl_matrix_alloc(d, d), *v = gsl_matrix_alloc(d, d);
    gsl_vector *s = gsl_vector_alloc(d), *w = gsl_vector_alloc(d), *x = gsl_vector_alloc(d);
    am_status st = AM_ENOMEM;
    if (u && v && s && w && x) {
        memcpy(u->data, f->m, d * d * sizeof(double));
        gsl_vector_const_view bv = gsl_vector_const_view_array(f->b, d);
        st = AM_ESOLVER;
        if (!gsl_linalg_SV_decomp(u, v, s, w)) {
            double smax = gsl_vector_get(s, 0);
            for (size_t i = 0; i < d; i++) /* drop numerically zero singular values */
                if (gsl_vector_get(s, i) <= 1e-12 * smax) gsl_vector_set(s, i, 0);
            if (!gsl_linalg_SV_solve(u, v, s, &bv.vector, x)) {
                f->fstar = am_objective_loss(f, x->data, NULL);
                st = AM_OK;
            }
        }
    }
    gsl_matrix_free(u);
    gsl_matrix_free(v);
    gsl_vector_free(s);
    gsl_vector_free(w);
    gsl_vector_free(x);
    return st;
}

/* F* of logistic regression: damped Newton from 0 (separable data: F* -> 0, the last value
 * is kept). */
static am_status logistic_optimum(am_objective *f)
{
    size_t d = f->d, n = f->n;
    double *x = calloc(d, sizeof *x), *g = malloc(d * sizeof *g), *xt = malloc(d * sizeof *xt);
    gsl_matrix *h = gsl_matrix_alloc(d, d);
    gsl_vector *step = gsl_vector_alloc(d);
    am_status st = AM_ENOMEM;
    if (!x || !g || !xt || !h || !step) goto done;
    double loss = am_objective_loss(f, x, g);
    for (int it = 0; it < 100; it++) {
        double gmax = 0;
        for (size_t i = 0; i < d; i++)
            gmax = fmax(gmax, fabs(g[i]));
        if (gmax < 1e-12) break;
        gsl_matrix_set_zero(h);
        for (size_t r = 0; r < n; r++) {
            const double *a = f->a + r * d;
            double p = sigmoid(dot(d, a, x)), wgt = p * (1 - p) / (double)n;
            for (size_t i = 0; i < d; i++)
                for (size_t j = 0; j <= i; j++)
                    h->data[i * d + j] += wgt * a[i] * a[j];
        }
        for (size_t i = 0; i < d; i++) {
            h->data[i * d + i] += 1e-12;
            for (size_t j = 0; j < i; j++)
                h->data[j * d + i] = h->data[i * d + j];
        }
        gsl_vector_view gv = gsl_vector_view_array(g, d);
        if (gsl_linalg_cholesky_decomp1(h) || gsl_linalg_cholesky_solve(h, &gv.vector, step)) break;
        double t = 1, nl = loss;
        for (int ls = 0; ls < 60; ls++, t *= 0.5) {
            for (size_t i = 0; i < d; i++)
                xt[i] = x[i] - t * step->data[i];
            nl = am_objective_loss(f, xt, NULL);
            if (nl <= loss) break;
        }
        if (!(nl <= loss)) break;
        memcpy(x, xt, d * sizeof *x);
        loss = am_objective_loss(f, x, g);
    }
    f->fstar = loss;
    st = AM_OK;
done:
    free(x);
    free(g);
    free(xt);
    gsl_matrix_free(h);
    gsl_vector_free(step);
    return st;
}

/* Top eigenvector of the covariance into f->b. */
static am_status pca_top(am_objective *f)
{
    size_t d = f->d;
    gsl_matrix *s = gsl_matrix_alloc(d, d), *ev = gsl_matrix_alloc(d, d);
    gsl_vector *eval = gsl_vector_alloc(d);
    gsl_eigen_symmv_workspace *w = gsl_eigen_symmv_alloc(d);
    am_status st = AM_ENOMEM;
    if (s && ev && eval && w) {
        memcpy(s->data, f->m, d * d * sizeof(double));
        st = AM_ESOLVER;
        if (!gsl_eigen_symmv(s, eval, ev, w) &&
            !gsl_eigen_symmv_sort(eval, ev, GSL_EIGEN_SORT_VAL_DESC)) {
            for (size_t i = 0; i < d; i++)
                f->b[i] = gsl_matrix_get(ev, i, 0);
            f->fstar = 0;
            st = gsl_vector_get(eval, 0) > gsl_vector_get(eval, 1) ? AM_OK : AM_EINVAL;
        }
    }
    gsl_matrix_free(s);
    gsl_matrix_free(ev);
    gsl_vector_free(eval);
    if (w) gsl_eigen_symmv_free(w);
    return st;
}

am_objective *am_objective_alloc(am_objective_kind kind, const am_dataset *ds, am_status *status,
                                 char *err, size_t errlen)
{
    am_status st = AM_OK;
    am_objective *f = NULL;
    size_t n = ds->n, d = ds->d;
    if (n < 1 || d < 1 || (kind == AM_OBJ_PCA && d < 2) || (size_t)kind >= am_objective_table_len) {
        snprintf(err, errlen, "the %s objective needs %s", am_objective_name(kind),
                 kind == AM_OBJ_PCA ? "at least 2 features" : "at least 1 feature and 1 row");
        st = AM_EINVAL;
        goto out;
    }
    if (kind == AM_OBJ_LOGISTIC)
        for (size_t r = 0; r < n; r++)
            if (ds->y[r] != 0 && ds->y[r] != 1) {
                snprintf(err, errlen, "logistic labels must be 0 or 1, row %zu has %g", r + 1,
                         ds->y[r]);
                st = AM_EINVAL;
                goto out;
            }
    f = calloc(1, sizeof *f);
    if (f) {
        f->a = malloc(n * d * sizeof *f->a);
        f->y = malloc(n * sizeof *f->y);
        f->m = calloc(d * d, sizeof *f->m);
        f->b = calloc(d, sizeof *f->b);
    }
    if (!f || !f->a || !f->y || !f->m || !f->b) {
        snprintf(err, errlen, "out of memory");
        st = AM_ENOMEM;
        goto out;
    }
    f->kind = kind;
    f->n = n;
    f->d = d;
    memcpy(f->a, ds->a, n * d * sizeof *f->a);
    memcpy(f->y, ds->y, n * sizeof *f->y);
    if (kind == AM_OBJ_PCA) { /* centre the features */
        for (size_t i = 0; i < d; i++) {
            double mean = 0;
            for (size_t r = 0; r < n; r++)
                mean += f->a[r * d + i];
            mean /= (double)n;
            for (size_t r = 0; r < n; r++)
                f->a[r * d + i] -= mean;
        }
    }
    for (size_t r = 0; r < n; r++) {
        const double *a = f->a + r * d;
        for (size_t i = 0; i < d; i++) {
            for (size_t j = 0; j < d; j++)
                f->m[i * d + j] += a[i] * a[j] / (double)n;
            f->b[i] += a[i] * f->y[r] / (double)n;
        }
        f->c += f->y[r] * f->y[r] / (double)n;
    }
    switch (kind) {
    case AM_OBJ_LSQ:
        st = lsq_optimum(f);
        break;
    case AM_OBJ_LOGISTIC:
        st = logistic_optimum(f);
        break;
    case AM_OBJ_PCA:
        st = pca_top(f);
        break;
    }
    if (st)
        snprintf(err, errlen, "%s",
                 st == AM_EINVAL ? "the top eigenvalue of the covariance is not simple"
                                 : "the reference optimum could not be computed");
out:
    if (st) {
        am_objective_free(f);
        f = NULL;
    }
    if (status) *status = st;
    return f;
}
