/*
 * am_stale.c -- the objectives and the simulated-staleness runs of am_stale.h.
 */
#include "am_stale.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#include "../core/am_rng.h"
#include "../core/am_ensemble.h"

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
    gsl_error_handler_t *old = gsl_set_error_handler_off();
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
    gsl_set_error_handler(old);
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

am_stale_params am_stale_params_default(void)
{
    am_stale_params p = {4, 0, 8, 0.01, 20000, 1};
    return p;
}

static uint64_t uniform_below(am_rng *r, uint64_t m)
{
    return (uint64_t)(((unsigned __int128)am_rng_u64(r) * m) >> 64);
}

am_status am_stale_run_one(const am_objective *f, const am_optim_params *opt,
                           const am_stale_params *sp, uint64_t replica, am_stale_run *out)
{
    out->reached = 0;
    out->steps = 0;
    out->coherence_min = NAN;
    if (sp->workers < 1 || sp->batch < 1 || !(sp->target > 0 && sp->target < 1) ||
        sp->s > 100000000)
        return AM_EINVAL;
    size_t d = f->d, slots = sp->s + 1;
    am_status st;
    am_optim *o = am_optim_alloc(opt, d, &st);
    if (!o) return st;
    double *hist = malloc(slots * d * sizeof *hist), *grads = malloc(slots * d * sizeof *grads);
    double *x = malloc(d * sizeof *x), *g = malloc(d * sizeof *g);
    if (!hist || !grads || !x || !g) {
        st = AM_ENOMEM;
        goto done;
    }
    st = AM_OK;
    am_objective_start(f, sp->seed, replica, x);
    memcpy(hist, x, d * sizeof *x);
    double fstar = f->fstar;
    double gap0 = am_objective_loss(f, x, grads) - fstar;
    double cmin = INFINITY;
    if (gap0 <= 0) {
        out->reached = 1;
        goto done;
    }
    double thresh = sp->target * gap0, inv = 1.0 / (double)(sp->workers * sp->batch);
    am_rng r;
    am_rng_init(&r, sp->seed, replica, AM_STREAM_STALE, 0);
    for (uint64_t k = 0; k < sp->max_steps; k++) {
        am_rng_seek(&r, k);
        memset(g, 0, d * sizeof *g);
        uint64_t maxr = k < sp->s ? k : sp->s;
        for (size_t p = 0; p < sp->workers; p++) {
            uint64_t lag = uniform_below(&r, sp->s + 1);
            if (lag > maxr) lag = maxr;
            const double *xs = hist + ((k - lag) % slots) * d;
            for (size_t b = 0; b < sp->batch; b++)
                am_objective_add_sample_grad(f, xs, (size_t)uniform_below(&r, f->n), g);
        }
        for (size_t i = 0; i < d; i++)
            g[i] *= inv;
        am_optim_step(o, x, g);
        uint64_t k1 = k + 1;
        double *gk = grads + (k1 % slots) * d;
        memcpy(hist + (k1 % slots) * d, x, d * sizeof *x);
        double gap = am_objective_loss(f, x, gk) - fstar;
        out->steps = (double)k1;
        if (!isfinite(gap)) break;
        double gg = dot(d, gk, gk);
        if (gg > 0) {
            uint64_t jlo = k1 > sp->s ? k1 - sp->s : 0;
            double mu = INFINITY;
            for (uint64_t j = jlo; j <= k1; j++)
                mu = fmin(mu, dot(d, gk, grads + (j % slots) * d) / gg);
            cmin = fmin(cmin, mu);
        }
        if (gap <= thresh) {
            out->reached = 1;
            break;
        }
    }
    out->coherence_min = isfinite(cmin) ? cmin : NAN;
done:
    am_optim_free(o);
    free(hist);
    free(grads);
    free(x);
    free(g);
    return st;
}

am_status am_stale_ensemble(const am_objective *f, const am_optim_params *opt,
                            const am_stale_params *sp, size_t replicas, int threads,
                            am_stale_summary *out)
{
    memset(out, 0, sizeof *out);
    if (replicas < 1) return AM_EINVAL;
    am_stale_run *runs = malloc(replicas * sizeof *runs);
    if (!runs) return AM_ENOMEM;
    int nt = am_ensemble_threads(threads);
    int fail = 0;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) reduction(max : fail)
    for (size_t r = 0; r < replicas; r++) {
        am_status st = am_stale_run_one(f, opt, sp, r, &runs[r]);
        if (st) fail = (int)st > fail ? (int)st : fail;
    }
    if (fail) {
        free(runs);
        return (am_status)fail;
    }
    out->replicas = replicas;
    for (size_t r = 0; r < replicas; r++) {
        if (runs[r].reached) {
            out->reached++;
            am_stats_push(&out->steps, runs[r].steps);
        }
        if (isfinite(runs[r].coherence_min)) am_stats_push(&out->coherence, runs[r].coherence_min);
    }
    free(runs);
    return AM_OK;
}
