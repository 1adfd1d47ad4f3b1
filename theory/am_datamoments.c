/*
 * am_datamoments.c -- the empirical distribution of a data set's centred rows and its
 * moments Sigma, Q, lambda, alpha_ij^2, C_d (see am_datamoments.h). The products run on
 * OpenBLAS over blocks of AM_DATAMOMENTS_BLOCK rows, so no n x d matrix of doubles is formed
 * for byte sources.
 */
#include "am_datamoments.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fortran entries of OpenBLAS (column-major; the hidden string lengths of the Fortran ABI
 * are not read by OpenBLAS's C implementation). */
void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *beta, double *c, const int *ldc);
void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc);
void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
            double *work, const int *lwork, int *info);
void openblas_set_num_threads(int num_threads);

#define AM_DATAMOMENTS_BLOCK 1024

double am_datamoments_memory(size_t n, size_t d_source, int bytes, size_t project)
{
    double nd = (double)n * (double)d_source, dd = (double)d_source * (double)d_source;
    double src = bytes ? nd : 8.0 * nd;
    double proj = project ? 8.0 * (double)n * (double)project : 0.0;
    /* Sigma, Q, alpha2, dsyev workspace; two blocks of rows */
    return src + proj + 8.0 * (4.0 * dd + 2.0 * AM_DATAMOMENTS_BLOCK * (double)d_source);
}

double am_datamoments_value(const am_datamoments *m, size_t r, size_t j)
{
    if (m->bytes) return (double)m->bytes[r * m->d + j] / 255.0 - m->mean[j];
    return m->rows[r * m->d + j];
}

void am_datamoments_row(const am_datamoments *m, size_t r, double *x)
{
    size_t d = m->d;
    if (m->bytes) {
        const uint8_t *b = m->bytes + r * d;
        for (size_t j = 0; j < d; j++)
            x[j] = (double)b[j] / 255.0 - m->mean[j];
    } else {
        memcpy(x, m->rows + r * d, d * sizeof *x);
    }
}

void am_datamoments_free(am_datamoments *m)
{
    if (!m) return;
    free(m->bytes);
    free(m->rows);
    free(m->mean);
    free(m->lambda);
    free(m->q);
    free(m->alpha2);
    free(m->lambda_source);
    free(m);
}

/* Rows r0..r0+nb-1 of the current distribution into buf[nb d]. */
static void block_rows(const am_datamoments *m, size_t r0, size_t nb, double *buf)
{
    for (size_t r = 0; r < nb; r++)
        am_datamoments_row(m, r0 + r, buf + r * m->d);
}

/* Sigma = (1/n) sum_r x_r x_r^T of the current distribution into s[d d] (full, symmetric). */
static void covariance(const am_datamoments *m, double *buf, double *s)
{
    int d = (int)m->d, ld = (int)m->d;
    const double one = 1.0;
    memset(s, 0, m->d * m->d * sizeof *s);
    for (size_t r0 = 0; r0 < m->n; r0 += AM_DATAMOMENTS_BLOCK) {
        size_t nb = m->n - r0 < AM_DATAMOMENTS_BLOCK ? m->n - r0 : AM_DATAMOMENTS_BLOCK;
        block_rows(m, r0, nb, buf);
        int k = (int)nb;
        /* column-major: buf is d x nb, s += buf buf^T (upper triangle) */
        dsyrk_("U", "N", &d, &k, &one, buf, &ld, &one, s, &ld);
    }
    size_t dd = m->d;
    for (size_t j = 0; j < dd; j++)
        for (size_t i = 0; i <= j; i++) {
            double v = s[j * dd + i] / (double)m->n; /* column-major upper: (i, j) */
            s[j * dd + i] = v;
            s[i * dd + j] = v;
        }
}

/* Eigen-decomposition of the symmetric s[d d] (destroyed) into lambda (non-increasing,
 * negatives set to 0) and q (row-major, columns = eigenvectors, largest component > 0). */
static am_status eigen(size_t dim, double *s, double *lambda, double *q, char *err, size_t errlen)
{
    int n = (int)dim, lwork = -1, info = 0;
    double wq, *w = malloc(dim * sizeof *w), *work = NULL;
    if (!w) goto nomem;
    dsyev_("V", "U", &n, s, &n, w, &wq, &lwork, &info);
    if (info) goto fail;
    lwork = (int)wq;
    if (lwork < 3 * n) lwork = 3 * n;
    work = malloc((size_t)lwork * sizeof *work);
    if (!work) goto nomem;
    dsyev_("V", "U", &n, s, &n, w, work, &lwork, &info);
    if (info) goto fail;
    for (size_t j = 0; j < dim; j++) {
        size_t src = dim - 1 - j; /* ascending -> non-increasing */
        const double *col = s + src * dim;
        size_t imax = 0;
        for (size_t i = 1; i < dim; i++)
            if (fabs(col[i]) > fabs(col[imax])) imax = i;
        double sign = col[imax] < 0 ? -1.0 : 1.0;
        for (size_t i = 0; i < dim; i++)
            q[i * dim + j] = sign * col[i];
        lambda[j] = w[src] > 0 ? w[src] : 0.0;
    }
    free(w);
    free(work);
    return AM_OK;
fail:
    snprintf(err, errlen, "the eigensolver dsyev failed on the %zu x %zu covariance (info %d)", dim,
             dim, info);
    free(w);
    free(work);
    return AM_ESOLVER;
nomem:
    free(w);
    snprintf(err, errlen, "out of memory");
    return AM_ENOMEM;
}

/* alpha_ij^2 = (1/n) sum_r y_ri^2 y_rj^2 with y_r = Q^T x_r, into a2[d d]; and C_d. */
static void fourth_moments(am_datamoments *m, double *buf, double *ybuf)
{
    size_t dd = m->d;
    int d = (int)dd;
    const double one = 1.0, zero = 0.0;
    double *a2 = m->alpha2, bound2 = 0;
    memset(a2, 0, dd * dd * sizeof *a2);
    for (size_t r0 = 0; r0 < m->n; r0 += AM_DATAMOMENTS_BLOCK) {
        size_t nb = m->n - r0 < AM_DATAMOMENTS_BLOCK ? m->n - r0 : AM_DATAMOMENTS_BLOCK;
        int k = (int)nb;
        block_rows(m, r0, nb, buf);
        for (size_t r = 0; r < nb; r++) {
            double s = 0;
            for (size_t j = 0; j < dd; j++)
                s += buf[r * dd + j] * buf[r * dd + j];
            if (s > bound2) bound2 = s;
        }
        /* column-major: Y^T (d x nb) = Q^T (q read column-major) x buf (d x nb) */
        dgemm_("N", "N", &d, &k, &d, &one, m->q, &d, buf, &d, &zero, ybuf, &d);
        for (size_t i = 0; i < nb * dd; i++)
            ybuf[i] *= ybuf[i];
        dsyrk_("U", "N", &d, &k, &one, ybuf, &d, &one, a2, &d);
    }
    for (size_t j = 0; j < dd; j++)
        for (size_t i = 0; i <= j; i++) {
            double v = a2[j * dd + i] / (double)m->n;
            a2[j * dd + i] = v;
            a2[i * dd + j] = v;
        }
    m->bound = sqrt(bound2);
}

static am_status build_fail(am_datamoments *m, uint8_t *bytes, double *x, am_status st, char *err,
                            size_t errlen, const char *why)
{
    if (m) {
        am_datamoments_free(m);
    } else {
        free(bytes);
        free(x);
    }
    if (why) snprintf(err, errlen, "%s", why);
    return st;
}

am_status am_datamoments_build(size_t n, size_t d, uint8_t *bytes, double *x, size_t project,
                               am_datamoments **out, char *err, size_t errlen)
{
    *out = NULL;
    char why[256];
    if (!bytes == !x)
        return build_fail(NULL, bytes, x, AM_EINVAL, err, errlen,
                          "exactly one of byte and double rows must be given");
    if (n < 2 || d < 2) {
        snprintf(why, sizeof why, "the data need at least 2 rows of 2 features, got %zu x %zu", n,
                 d);
        return build_fail(NULL, bytes, x, AM_EINVAL, err, errlen, why);
    }
    if (project == 1 || project > d) {
        snprintf(why, sizeof why, "the projection needs 2 <= K <= %zu (the features), got %zu", d,
                 project);
        return build_fail(NULL, bytes, x, AM_EINVAL, err, errlen, why);
    }
    if (d > 100000 || n > ((size_t)1 << 40) ||
        am_datamoments_memory(n, d, bytes != NULL, project) > (double)AM_MEMORY_LIMIT) {
        snprintf(why, sizeof why,
                 "%zu rows of %zu features need %.3g bytes, over the limit of %.3g", n, d,
                 am_datamoments_memory(n, d, bytes != NULL, project), (double)AM_MEMORY_LIMIT);
        return build_fail(NULL, bytes, x, AM_ENOMEM, err, errlen, why);
    }
    if (x)
        for (size_t i = 0; i < n * d; i++)
            if (!isfinite(x[i])) {
                snprintf(why, sizeof why, "feature %zu of row %zu is not finite", i % d + 1,
                         i / d + 1);
                return build_fail(NULL, bytes, x, AM_EINVAL, err, errlen, why);
            }
    am_datamoments *m = calloc(1, sizeof *m);
    if (!m) return build_fail(NULL, bytes, x, AM_ENOMEM, err, errlen, "out of memory");
    m->n = n;
    m->d = m->d_source = d;
    m->project = project;
    m->bytes = bytes;
    m->rows = x;
    size_t dd = d * d;
    m->mean = calloc(d, sizeof *m->mean);
    m->lambda_source = malloc(d * sizeof(double));
    m->q = malloc(dd * sizeof *m->q);
    double *s = malloc(dd * sizeof *s);
    double *buf = malloc(2 * AM_DATAMOMENTS_BLOCK * d * sizeof *buf);
    if (!m->mean || !m->lambda_source || !m->q || !s || !buf) {
        free(s);
        free(buf);
        return build_fail(m, NULL, NULL, AM_ENOMEM, err, errlen, "out of memory");
    }
    double *ybuf = buf + AM_DATAMOMENTS_BLOCK * d;
    openblas_set_num_threads(1); /* one summation order, whatever the BLAS threading */

    /* the mean: exact integer column sums for bytes, row order for doubles */
    if (bytes) {
        uint64_t *sum = calloc(d, sizeof *sum);
        if (!sum) {
            free(s);
            free(buf);
            return build_fail(m, NULL, NULL, AM_ENOMEM, err, errlen, "out of memory");
        }
        for (size_t r = 0; r < n; r++)
            for (size_t j = 0; j < d; j++)
                sum[j] += bytes[r * d + j];
        for (size_t j = 0; j < d; j++)
            m->mean[j] = (double)sum[j] / (255.0 * (double)n);
        free(sum);
    } else {
        for (size_t r = 0; r < n; r++)
            for (size_t j = 0; j < d; j++)
                m->mean[j] += x[r * d + j];
        for (size_t j = 0; j < d; j++)
            m->mean[j] /= (double)n;
        for (size_t r = 0; r < n; r++)
            for (size_t j = 0; j < d; j++)
                x[r * d + j] -= m->mean[j];
    }
    covariance(m, buf, s);
    am_status st = eigen(d, s, m->lambda_source, m->q, err, errlen);
    if (st) {
        free(s);
        free(buf);
        return build_fail(m, NULL, NULL, st, err, errlen, NULL);
    }
    if (project) {
        /* z_r = U_K^T x_r: column-major Z^T (K x nb) = (q's first K columns)^T buf */
        size_t kk = project;
        double *z = malloc(n * kk * sizeof *z);
        if (!z) {
            free(s);
            free(buf);
            return build_fail(m, NULL, NULL, AM_ENOMEM, err, errlen, "out of memory");
        }
        const double one = 1.0, zero = 0.0;
        int ik = (int)kk, id = (int)d;
        for (size_t r0 = 0; r0 < n; r0 += AM_DATAMOMENTS_BLOCK) {
            size_t nb = n - r0 < AM_DATAMOMENTS_BLOCK ? n - r0 : AM_DATAMOMENTS_BLOCK;
            int k = (int)nb;
            block_rows(m, r0, nb, buf);
            /* the row-major q read column-major with leading dimension d is Q^T: its first
             * K rows are U_K^T */
            dgemm_("N", "N", &ik, &k, &id, &one, m->q, &id, buf, &id, &zero, z + r0 * kk, &ik);
        }
        free(m->bytes);
        free(m->rows);
        m->bytes = NULL;
        m->rows = z;
        m->d = kk;
        dd = kk * kk;
        covariance(m, buf, s);
        double *qk = malloc(dd * sizeof *qk);
        m->lambda = malloc(kk * sizeof *m->lambda);
        if (!qk || !m->lambda) {
            free(qk);
            free(s);
            free(buf);
            return build_fail(m, NULL, NULL, AM_ENOMEM, err, errlen, "out of memory");
        }
        st = eigen(kk, s, m->lambda, qk, err, errlen);
        free(m->q);
        m->q = qk;
        if (st) {
            free(s);
            free(buf);
            return build_fail(m, NULL, NULL, st, err, errlen, NULL);
        }
    } else {
        m->lambda = malloc(d * sizeof *m->lambda);
        if (!m->lambda) {
            free(s);
            free(buf);
            return build_fail(m, NULL, NULL, AM_ENOMEM, err, errlen, "out of memory");
        }
        memcpy(m->lambda, m->lambda_source, d * sizeof *m->lambda);
    }
    free(s);
    m->alpha2 = malloc(m->d * m->d * sizeof *m->alpha2);
    if (!m->alpha2) {
        free(buf);
        return build_fail(m, NULL, NULL, AM_ENOMEM, err, errlen, "out of memory");
    }
    fourth_moments(m, buf, ybuf);
    free(buf);
    *out = m;
    return AM_OK;
}
