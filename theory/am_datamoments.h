// clang-format off
/*
 * am_datamoments.h -- a data set as the distribution of streaming PCA: the empirical
 * distribution of its centred rows (each row drawn with probability 1/n), and its moments.
 *
 * Rows: x_r = s_r - m, r = 0..n-1, where s_r is the source row (byte sources: s_rj =
 * byte_rj / 255; double sources: the features as given) and m = (1/n) sum_r s_r the mean, so
 * E x = 0 exactly in exact arithmetic. With project K > 0 the distribution is that of the
 * top-K principal coordinates z_r = U_K^T x_r (U_K the top K eigenvectors of the source's
 * covariance), a K-dimensional distribution with covariance diag(lambda_1..lambda_K).
 *
 * Moments of the distribution (the vectors x_r, or z_r when projected; dimension d):
 *   Sigma       = (1/n) sum_r x_r x_r^T = Q diag(lambda) Q^T, lambda non-increasing
 *                 (LAPACK dsyev_ of OpenBLAS; tiny negative eigenvalues from rounding are set
 *                 to 0; each eigenvector's largest-magnitude component is made positive)
 *   alpha_ij^2  = (1/n) sum_r y_ri^2 y_rj^2,  y_r = Q^T x_r   (m4_i = alpha_ii^2)
 *   C_d         = max_r |x_r|   (the almost-sure bound of the empirical distribution)
 * The products run on OpenBLAS (dsyrk_, dgemm_) over blocks of rows, on one BLAS thread, so
 * the moments are the same on every run of one machine and library build.
 */
// clang-format on
#ifndef AM_DATAMOMENTS_H
#define AM_DATAMOMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "../core/am_common.h"

typedef struct am_datamoments {
    size_t n;              /* rows */
    size_t d;              /* dimension of the distribution (K when projected) */
    size_t d_source;       /* features of the source rows */
    size_t project;        /* K, or 0 */
    uint8_t *bytes;        /* [n d] byte rows (unprojected byte source), else NULL */
    double *rows;          /* [n d] centred rows (projected or double source), else NULL */
    double *mean;          /* [d_source] the mean m subtracted from the source rows */
    double *lambda;        /* [d] eigenvalues of Sigma, non-increasing, >= 0 */
    double *q;             /* [d d] row-major, column j = eigenvector j */
    double *alpha2;        /* [d d] row-major alpha_ij^2 */
    double bound;          /* C_d = max_r |x_r| */
    double *lambda_source; /* [d_source] eigenvalues of the source covariance (= lambda when
                              not projected) */
} am_datamoments;

/* Bytes am_datamoments_build keeps and uses at most for n rows of d_source features
 * (byte rows when bytes, else doubles) projected on K (0: none). */
double am_datamoments_memory(size_t n, size_t d_source, int bytes, size_t project);

/* Builds the distribution of n >= 2 rows of d >= 2 features and its moments. Exactly one
 * of bytes ([n d], value / 255) and x ([n d] doubles) is given; the new object takes it
 * (frees it, also on failure). project 0 keeps all d features, 2 <= K <= d projects on the
 * top K principal coordinates. AM_EINVAL with a reason in err for bad sizes or a non-finite
 * feature, AM_ENOMEM over AM_MEMORY_LIMIT (checked before any work) or when allocation
 * fails, AM_ESOLVER when the eigensolver fails. */
am_status am_datamoments_build(size_t n, size_t d, uint8_t *bytes, double *x, size_t project,
                               am_datamoments **out, char *err, size_t errlen);

/* Writes row r (0-based) of the distribution, x_r or z_r, into x[0..d-1]. */
void am_datamoments_row(const am_datamoments *m, size_t r, double *x);

/* Coordinate j of row r of the distribution. */
double am_datamoments_value(const am_datamoments *m, size_t r, size_t j);

/* Frees the object; NULL is safe. */
void am_datamoments_free(am_datamoments *m);

#endif
