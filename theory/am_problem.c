/*
 * am_problem.c -- spectrum checks, the (optionally rotated) eigenbasis and the data
 * moments m4_i = E[Y_i^4], alpha_ij^2 = E[Y_i^2 Y_j^2] of the distributions in am_problem.h.
 */
#include "am_problem.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_matrix.h>

#include "../core/am_rng.h"

void am_problem_spectrum_linear(double hi, double lo, size_t dim, double *lambda)
{
    for (size_t i = 0; i < dim; i++)
        lambda[i] = hi - (hi - lo) * (double)i / (double)(dim - 1);
}

am_status am_problem_check_spectrum(size_t dim, const double *lambda)
{
    if (dim < 2 || !lambda) return AM_EINVAL;
    for (size_t i = 0; i < dim; i++) {
        if (!isfinite(lambda[i]) || !(lambda[i] > 0)) return AM_EINVAL;
        if (i > 0 && lambda[i] > lambda[i - 1]) return AM_EINVAL;
    }
    if (!(lambda[0] > lambda[1])) return AM_EINVAL;
    return AM_OK;
}

/* Haar-random orthogonal matrix: QR of a Gaussian matrix with the signs of R's diagonal
 * absorbed into Q (Mezzadri 2007). */
static int random_orthogonal(size_t d, uint64_t seed, double *q)
{
    gsl_matrix *a = gsl_matrix_alloc(d, d);
    gsl_vector *tau = gsl_vector_alloc(d);
    gsl_matrix *qm = gsl_matrix_alloc(d, d);
    gsl_matrix *r = gsl_matrix_alloc(d, d);
    int rc = -1;
    if (!a || !tau || !qm || !r) goto done;
    am_rng rng;
    am_rng_init(&rng, seed, 0, AM_STREAM_ROTATE, 0);
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < d; j++)
            gsl_matrix_set(a, i, j, am_rng_gaussian(&rng));
    if (gsl_linalg_QR_decomp(a, tau) || gsl_linalg_QR_unpack(a, tau, qm, r)) goto done;
    for (size_t j = 0; j < d; j++) {
        double s = gsl_matrix_get(r, j, j) < 0 ? -1.0 : 1.0;
        for (size_t i = 0; i < d; i++)
            q[i * d + j] = s * gsl_matrix_get(qm, i, j);
    }
    rc = 0;
done:
    gsl_matrix_free(a);
    gsl_vector_free(tau);
    gsl_matrix_free(qm);
    gsl_matrix_free(r);
    return rc;
}

/* Why a spectrum fails am_problem_check_spectrum, into err. */
static void spectrum_reason(size_t dim, const double *lambda, char *err, size_t errlen)
{
    if (dim < 2 || !lambda) {
        snprintf(err, errlen, "the spectrum needs dim >= 2 values, got %zu", lambda ? dim : 0);
        return;
    }
    for (size_t i = 0; i < dim; i++) {
        if (!isfinite(lambda[i]) || !(lambda[i] > 0)) {
            snprintf(err, errlen, "eigenvalue %zu must be finite and > 0, got %g", i + 1,
                     lambda[i]);
            return;
        }
        if (i > 0 && lambda[i] > lambda[i - 1]) {
            snprintf(err, errlen, "the spectrum must be non-increasing, eigenvalue %zu is %g > %g",
                     i + 1, lambda[i], lambda[i - 1]);
            return;
        }
    }
    snprintf(err, errlen, "the spectrum needs an eigen-gap lambda_1 > lambda_2, got %g, %g",
             lambda[0], lambda[1]);
}

/* Sets the status and (if err is not NULL) the reason of a failing constructor. */
static am_problem *alloc_fail(am_problem *p, am_status st, am_status *status, char *err,
                              size_t errlen, const char *why)
{
    am_problem_free(p);
    if (status) *status = st;
    if (why && err && errlen) snprintf(err, errlen, "%s", why);
    return NULL;
}

am_problem *am_problem_alloc(size_t dim, const double *lambda, am_dist dist, uint64_t rotate_seed,
                             am_status *status, char *err, size_t errlen)
{
    if (am_problem_check_spectrum(dim, lambda) != AM_OK) {
        if (err && errlen) spectrum_reason(dim, lambda, err, errlen);
        return alloc_fail(NULL, AM_EINVAL, status, err, errlen, NULL);
    }
    if (dist.kind == AM_DIST_STUDENT && !(dist.nu > 2))
        return alloc_fail(NULL, AM_EINVAL, status, err, errlen,
                          "student:NU needs NU > 2 (finite variance)");
    if (dim > ((size_t)1 << 20))
        return alloc_fail(NULL, AM_EINVAL, status, err, errlen, "the dimension exceeds 2^20");
    am_problem *p = calloc(1, sizeof *p);
    if (!p) return alloc_fail(NULL, AM_ENOMEM, status, err, errlen, "out of memory");
    p->dim = dim;
    p->dist = dist;
    p->lambda = malloc(dim * sizeof *p->lambda);
    p->sqrt_lambda = malloc(dim * sizeof *p->sqrt_lambda);
    if (!p->lambda || !p->sqrt_lambda)
        return alloc_fail(p, AM_ENOMEM, status, err, errlen, "out of memory");
    for (size_t i = 0; i < dim; i++) {
        p->lambda[i] = lambda[i];
        p->sqrt_lambda[i] = sqrt(lambda[i]);
    }
    if (rotate_seed) {
        if (dim * dim * sizeof(double) > AM_MEMORY_LIMIT / 4)
            return alloc_fail(p, AM_ENOMEM, status, err, errlen,
                              "the rotated eigenbasis would exceed the memory limit");
        p->q = malloc(dim * dim * sizeof *p->q);
        if (!p->q || random_orthogonal(dim, rotate_seed, p->q))
            return alloc_fail(p, AM_ENOMEM, status, err, errlen, "out of memory");
        p->rotate_seed = rotate_seed;
    }
    if (status) *status = AM_OK;
    return p;
}

am_problem *am_problem_alloc_data(am_datamoments *data, am_status *status, char *err, size_t errlen)
{
    size_t d = data->d;
    if (!(data->lambda[0] > data->lambda[1])) {
        char why[160];
        snprintf(why, sizeof why,
                 "the data's covariance needs an eigen-gap lambda_1 > lambda_2, got %g, %g",
                 data->lambda[0], data->lambda[1]);
        am_datamoments_free(data);
        return alloc_fail(NULL, AM_EINVAL, status, err, errlen, why);
    }
    am_problem *p = calloc(1, sizeof *p);
    if (!p) {
        am_datamoments_free(data);
        return alloc_fail(NULL, AM_ENOMEM, status, err, errlen, "out of memory");
    }
    p->dim = d;
    p->dist.kind = AM_DIST_DATA;
    p->data = data;
    p->lambda = malloc(d * sizeof *p->lambda);
    p->sqrt_lambda = malloc(d * sizeof *p->sqrt_lambda);
    p->q = malloc(d * d * sizeof *p->q);
    if (!p->lambda || !p->sqrt_lambda || !p->q)
        return alloc_fail(p, AM_ENOMEM, status, err, errlen, "out of memory");
    for (size_t i = 0; i < d; i++) {
        p->lambda[i] = data->lambda[i];
        p->sqrt_lambda[i] = sqrt(data->lambda[i]);
    }
    memcpy(p->q, data->q, d * d * sizeof *p->q);
    if (status) *status = AM_OK;
    return p;
}

void am_problem_free(am_problem *p)
{
    if (!p) return;
    am_datamoments_free(p->data);
    free(p->lambda);
    free(p->sqrt_lambda);
    free(p->q);
    free(p);
}

void am_problem_eigvec(const am_problem *p, size_t j, double *out)
{
    size_t d = p->dim;
    for (size_t i = 0; i < d; i++)
        out[i] = p->q ? p->q[i * d + j] : (i == j ? 1.0 : 0.0);
}

double am_problem_coord(const am_problem *p, const double *v, size_t j)
{
    if (!p->q) return v[j];
    size_t d = p->dim;
    double h = 0;
    for (size_t i = 0; i < d; i++)
        h += p->q[i * d + j] * v[i];
    return h;
}

double am_problem_m4(const am_problem *p, size_t i, am_status *status)
{
    double l2 = p->lambda[i] * p->lambda[i];
    if (status) *status = AM_OK;
    switch (p->dist.kind) {
    case AM_DIST_GAUSSIAN:
        return 3.0 * l2;
    case AM_DIST_RADEMACHER:
        return l2;
    case AM_DIST_UNIFORM:
        return 1.8 * l2;
    case AM_DIST_STUDENT:
        if (!(p->dist.nu > 4)) {
            if (status) *status = AM_EDOM;
            return INFINITY;
        }
        return 3.0 * l2 * (p->dist.nu - 2.0) / (p->dist.nu - 4.0);
    case AM_DIST_EXPECTED:
        return l2; /* Y Y^T replaced by its mean: no fluctuation */
    case AM_DIST_DATA:
        return p->data->alpha2[i * p->dim + i];
    }
    return NAN;
}

double am_problem_alpha2(const am_problem *p, size_t i, size_t j, am_status *status)
{
    if (i == j) return am_problem_m4(p, i, status);
    if (status) *status = AM_OK;
    if (p->dist.kind == AM_DIST_DATA) return p->data->alpha2[i * p->dim + j];
    return p->lambda[i] * p->lambda[j];
}

double am_problem_bound(const am_problem *p)
{
    if (p->dist.kind == AM_DIST_DATA) return p->data->bound;
    double s = 0;
    for (size_t i = 0; i < p->dim; i++)
        s += p->lambda[i];
    switch (p->dist.kind) {
    case AM_DIST_RADEMACHER:
        return sqrt(s);
    case AM_DIST_UNIFORM:
        return sqrt(3.0 * s);
    case AM_DIST_EXPECTED:
        return 0.0;
    default:
        return INFINITY;
    }
}

const char *am_problem_dist_name(am_dist_kind kind)
{
    static const char *const names[] = {"gaussian", "rademacher", "uniform",
                                        "student",  "expected",   "data"};
    return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "unknown";
}

am_status am_problem_dist_parse(const char *spec, am_dist *out, char *err, size_t errlen)
{
    static const struct {
        const char *name;
        am_dist_kind kind;
    } table[] = {{"gaussian", AM_DIST_GAUSSIAN},
                 {"rademacher", AM_DIST_RADEMACHER},
                 {"uniform", AM_DIST_UNIFORM},
                 {"expected", AM_DIST_EXPECTED}};
    out->nu = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(spec, table[i].name) == 0) {
            out->kind = table[i].kind;
            return AM_OK;
        }
    if (strncmp(spec, "student:", 8) == 0) {
        char *end;
        errno = 0;
        double nu = strtod(spec + 8, &end);
        if (spec[8] == 0 || *end || errno || !isfinite(nu) || !(nu > 2)) {
            snprintf(err, errlen, "student:NU needs a finite NU > 2 (finite variance), got '%s'",
                     spec);
            return AM_EINVAL;
        }
        out->kind = AM_DIST_STUDENT;
        out->nu = nu;
        return AM_OK;
    }
    snprintf(err, errlen,
             "unknown distribution '%s' (gaussian, rademacher, uniform, student:NU, expected)",
             spec);
    return AM_EINVAL;
}

void am_problem_dist_format(const am_dist *dist, char *buf, size_t len)
{
    if (dist->kind == AM_DIST_STUDENT)
        snprintf(buf, len, "student:%.17g", dist->nu);
    else
        snprintf(buf, len, "%s", am_problem_dist_name(dist->kind));
}
